import { describe, expect, it, vi } from "vitest";
import { eventTitle, renderTimeline, toneOf } from "../src/timeline";
import { explorerState, XSS } from "./fixtures";
import type { JitEvent } from "../src/types";

describe("timeline", () => {
  const events = explorerState().events as JitEvent[];

  it("colours cache hits green, recompiles red, lost side effects and stale globals amber", () => {
    expect(toneOf("cache_hit")).toBe("good");
    expect(toneOf("recompile")).toBe("bad");
    expect(toneOf("side_effect_lost")).toBe("warn");
    expect(toneOf("stale_global")).toBe("warn");
    expect(toneOf("trace")).toBe("info");
  });

  it("shows each event with its count and a recompile's reason", () => {
    const host = document.createElement("div");
    renderTimeline(host, events);
    const rows = host.querySelectorAll("li.jv-event");
    expect(rows.length).toBe(4);
    expect(rows[1].className).toContain("jv-tone-good");
    expect(rows[1].textContent).toContain("×3");
    expect(rows[2].className).toContain("jv-tone-bad");
    expect(rows[2].textContent).toContain("changed from f32[3] to f32[4]");
    expect(host.querySelector("img")).toBeNull();
    expect(rows[3].textContent).toContain(XSS);
    expect(eventTitle(events[2])).toContain("recompile (x:f32[4])");
  });

  it("reports which event was picked", () => {
    const host = document.createElement("div");
    const pick = vi.fn();
    renderTimeline(host, events, pick);
    (host.querySelectorAll("li.jv-event")[2] as HTMLElement).click();
    expect(pick).toHaveBeenCalledWith(events[2]);
  });
});
