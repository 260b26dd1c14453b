import { describe, expect, it } from "vitest";
import { parseSvg } from "../src/sanitize";
import { sampleSvg } from "./fixtures";

describe("parseSvg", () => {
  it("keeps Graphviz's nodes and ids", () => {
    const svg = parseSvg(sampleSvg())!;
    expect(svg.localName).toBe("svg");
    expect(svg.querySelectorAll("g.node").length).toBe(6);
    expect(svg.querySelector("#n-e0")).not.toBeNull();
  });

  it("drops scripts, foreign HTML, event handlers and outside links", () => {
    const evil = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(1)">` +
      `<script>alert(1)</script><foreignObject><div xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="alert(1)"/></div></foreignObject>` +
      `<a xlink:href="javascript:alert(1)"><text onclick="alert(1)">t</text></a><a href="#ok"><text>ok</text></a></svg>`;
    const svg = parseSvg(evil)!;
    expect(svg.getAttribute("onload")).toBeNull();
    expect(svg.querySelector("script")).toBeNull();
    expect(svg.querySelector("foreignObject")).toBeNull();
    expect(svg.querySelector("img")).toBeNull();
    expect(svg.querySelector("text")!.getAttribute("onclick")).toBeNull();
    const links = Array.from(svg.querySelectorAll("a"));
    expect(links[0].getAttribute("xlink:href")).toBeNull();
    expect(links[1].getAttribute("href")).toBe("#ok");
  });

  it("returns null for text that is not SVG", () => {
    expect(parseSvg("")).toBeNull();
    expect(parseSvg("<div>hi</div>")).toBeNull();
  });
});
