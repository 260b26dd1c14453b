import { describe, expect, it } from "vitest";
import { boxInSvg, MAX_PX, MIN_FIT_PX, PanZoom, READABLE_PX } from "../src/panzoom";

const NS = "http://www.w3.org/2000/svg";

/** An SVG of `width` x `height` units with 10-unit labels, in a 900 x 500 px canvas. */
function setup(width: number, height: number) {
  const host = document.createElement("div");
  host.getBoundingClientRect = () => ({ x: 0, y: 0, left: 0, top: 0, width: 900, height: 500,
    right: 900, bottom: 500, toJSON: () => ({}) }) as DOMRect;
  const svg = document.createElementNS(NS, "svg") as SVGSVGElement;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.innerHTML = `<g class="graph" transform="scale(1 1) rotate(0) translate(4 ${height - 4})">` +
    `<g class="node" id="n-a"><text font-size="10.00">a</text></g></g>`;
  host.appendChild(svg);
  document.body.appendChild(host);
  const pz = new PanZoom(svg, host);
  const box = () => svg.getAttribute("viewBox")!.split(" ").map(Number);
  const labelPx = () => 10 * 900 / box()[2];
  return { host, svg, pz, box, labelPx };
}

describe("pan and zoom", () => {
  it("opens a 3-node graph at a readable size, not blown up", () => {
    const { pz, labelPx, box } = setup(120, 180);
    pz.readable();
    expect(labelPx()).toBeCloseTo(READABLE_PX, 5);
    const [x, y, w, h] = box();
    expect(x + w / 2).toBeCloseTo(60, 5); // centred
    expect(y + h / 2).toBeCloseTo(90, 5);
    pz.fit();
    expect(labelPx()).toBeLessThanOrEqual(MAX_PX + 1e-9);
  });

  it("opens a large graph readable at its top, and fit does not make a sliver", () => {
    const { pz, labelPx, box } = setup(300, 5000);
    pz.readable();
    expect(labelPx()).toBeCloseTo(READABLE_PX, 5);
    expect(box()[1]).toBe(0); // the top, where the inputs are
    pz.fit();
    expect(labelPx()).toBeGreaterThanOrEqual(MIN_FIT_PX - 1e-9);
  });

  it("fits a middle-sized graph whole when its labels stay readable", () => {
    const { pz, labelPx } = setup(720, 400); // fit scale 1.25: 12.5 px labels
    pz.readable();
    expect(labelPx()).toBeCloseTo(12.5, 5);
  });

  it("centres on a node through Graphviz's root translate", () => {
    const { pz, svg, box } = setup(300, 5000);
    pz.readable();
    const node = svg.querySelector("#n-a") as unknown as SVGGraphicsElement;
    // in the node's own coordinates (before translate(4 4996)) it sits near the bottom
    (node as any).getBBox = () => ({ x: 100, y: -30, width: 40, height: 20 });
    (svg as any).getScreenCTM = undefined;
    const target = boxInSvg(svg, node);
    expect(target).toEqual({ x: 104, y: 4966, width: 40, height: 20 });
    pz.show(target);
    const [x, y, w, h] = box();
    expect(x + w / 2).toBeCloseTo(124, 5);
    expect(y + h / 2).toBeCloseTo(4976, 5);
  });

  it("never pans the graph out of view", () => {
    const { pz, box } = setup(120, 180);
    pz.readable();
    pz.show({ x: 10000, y: 10000, width: 1, height: 1 });
    const [x, y, w, h] = box();
    expect(x).toBeLessThan(120);
    expect(y).toBeLessThan(180);
    expect(x + w).toBeGreaterThan(0);
    expect(y + h).toBeGreaterThan(0);
  });
});
