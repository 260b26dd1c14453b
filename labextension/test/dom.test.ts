import { describe, expect, it } from "vitest";
import { el, escapeHtml } from "../src/dom";
import { XSS } from "./fixtures";

describe("dom helpers", () => {
  it("escapes markup characters", () => {
    expect(escapeHtml(XSS)).toBe("&lt;img src=x onerror=alert(1)&gt;");
    expect(escapeHtml(`"'&`)).toBe("&quot;&#39;&amp;");
  });

  it("puts user strings in as text, never as markup", () => {
    const node = el("div", {}, XSS, el("span", {}, XSS));
    expect(node.querySelector("img")).toBeNull();
    expect(node.textContent).toBe(XSS + XSS);
  });

  it("refuses event-handler attributes", () => {
    expect(() => el("div", { onclick: "alert(1)" })).toThrow(/onclick/);
  });
});
