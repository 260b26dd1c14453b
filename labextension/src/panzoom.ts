// Pan (drag, wheel) and zoom (ctrl/⌘ + wheel, buttons) an SVG by changing its viewBox.
//
// Scales are chosen for the labels, not for the graph's outline: the initial view draws node
// labels at about READABLE_PX (11-16 px at 100% browser zoom) and lets a large graph extend past
// the canvas (the wheel scrolls it) instead of shrinking it unreadably; `fit` shows the whole
// graph but never blows a small one up past MAX_PX. The view always keeps part of the graph on
// screen.

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** On-screen label sizes, in CSS pixels. */
export const READABLE_PX = 13;
export const MIN_READABLE_PX = 11;
export const MAX_PX = 16;
/** `fit` shrinks no further than this (a 5,000-node column would be a 1-px sliver). */
export const MIN_FIT_PX = 5;

export class PanZoom {
  private box: Box;
  private readonly full: Box;
  private readonly fontUnits: number;
  private drag: { x: number; y: number; box: Box } | null = null;
  private readonly cleanups: (() => void)[] = [];
  moved = false; // true while a drag moved the view (so the click that ends it is ignored)

  constructor(private readonly svg: SVGSVGElement, private readonly host: HTMLElement) {
    this.full = initialBox(svg);
    this.fontUnits = labelFontUnits(svg);
    this.box = { ...this.full };
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    this.apply();
    this.listen(host, "wheel", (e) => this.onWheel(e as WheelEvent), { passive: false });
    this.listen(host, "pointerdown", (e) => this.onDown(e as PointerEvent));
    this.listen(window, "pointermove", (e) => this.onMove(e as PointerEvent));
    this.listen(window, "pointerup", () => (this.drag = null));
    if (typeof ResizeObserver !== "undefined") {
      const observer = new ResizeObserver(() => this.onResize());
      observer.observe(host);
      this.cleanups.push(() => observer.disconnect());
    }
  }

  get viewBox(): Box {
    return { ...this.box };
  }

  /** Screen pixels per SVG unit now (0 when the canvas is not laid out). */
  get scale(): number {
    const rect = this.host.getBoundingClientRect();
    return rect.width && this.box.width ? rect.width / this.box.width : 0;
  }

  /** The scale at which labels are `px` pixels tall. */
  scaleFor(px: number): number {
    return px / this.fontUnits;
  }

  /** The whole graph, centred, with labels no larger than MAX_PX and no smaller than
   * MIN_FIT_PX (a graph too tall for that shows its top). */
  fit(): void {
    const rect = this.canvasSize();
    if (!rect) {
      this.box = { ...this.full };
      return this.apply();
    }
    const fitScale = Math.min(rect.width / this.full.width, rect.height / this.full.height);
    this.setScale(clamp(fitScale, this.scaleFor(MIN_FIT_PX), this.scaleFor(MAX_PX)), rect);
  }

  /** The initial view: labels at READABLE_PX, or the whole graph when that keeps them
   * between MIN_READABLE_PX and MAX_PX. A graph larger than the canvas shows its top (where
   * its inputs are), centred; the wheel scrolls to the rest. */
  readable(): void {
    const rect = this.canvasSize();
    if (!rect) return this.fit();
    const fitScale = Math.min(rect.width / this.full.width, rect.height / this.full.height);
    const low = this.scaleFor(MIN_READABLE_PX);
    const high = this.scaleFor(MAX_PX);
    const scale = fitScale >= low && fitScale <= high ? fitScale : this.scaleFor(READABLE_PX);
    this.setScale(scale, rect);
  }

  /** Zoom by `factor` (>1 zooms in) around a point in SVG coordinates (default: centre). */
  zoom(factor: number, cx?: number, cy?: number): void {
    const x = cx ?? this.box.x + this.box.width / 2;
    const y = cy ?? this.box.y + this.box.height / 2;
    const maxWidth = Math.max(this.full.width, this.full.height * this.box.width / this.box.height) * 1.5;
    const width = clamp(this.box.width / factor, this.full.width / 200, maxWidth);
    const scale = width / this.box.width;
    const height = this.box.height * scale;
    this.box = { x: x - (x - this.box.x) * scale, y: y - (y - this.box.y) * scale, width, height };
    this.apply();
  }

  /** Show the top of a box (an expanded cluster) at the current scale: all of it, centred,
   * when it fits, else its top part. */
  showTop(target: Box): void {
    if (target.height * 1.1 <= this.box.height) return this.show(target);
    const { width, height } = this.box;
    const margin = Math.min(height * 0.05, 20);
    this.box = { x: target.x + target.width / 2 - width / 2, y: target.y - margin, width, height };
    this.apply();
  }

  /** Centre the view on a box (SVG coordinates: see `boxInSvg`), keeping the scale unless
   * the box does not fit (then zooming out to show it, no further than MIN_FIT_PX). */
  show(target: Box): void {
    let { width, height } = this.box;
    const grow = Math.max(target.width * 1.2 / width, target.height * 1.2 / height);
    if (grow > 1) {
      const rect = this.canvasSize();
      const limit = rect ? rect.width / this.scaleFor(MIN_FIT_PX) / width : grow;
      const factor = Math.min(grow, Math.max(1, limit));
      width *= factor;
      height *= factor;
    }
    this.box = { x: target.x + target.width / 2 - width / 2,
      y: target.y + target.height / 2 - height / 2, width, height };
    this.apply();
  }

  destroy(): void {
    for (const cleanup of this.cleanups) cleanup();
  }

  /** The canvas changed size (the inspector widened, the cell was resized): keep the scale
   * and the centre rather than stretching the drawing. */
  private onResize(): void {
    const size = this.canvasSize();
    const last = this.lastSize;
    if (!size || !last || (size.width === last.width && size.height === last.height)) return;
    const scale = last.width / this.box.width;
    const cx = this.box.x + this.box.width / 2;
    const cy = this.box.y + this.box.height / 2;
    const width = size.width / scale;
    const height = size.height / scale;
    this.box = { x: cx - width / 2, y: cy - height / 2, width, height };
    this.apply();
  }

  private lastSize: { width: number; height: number } | null = null;

  private canvasSize(): { width: number; height: number } | null {
    const rect = this.host.getBoundingClientRect();
    return rect.width && rect.height ? { width: rect.width, height: rect.height } : null;
  }

  /** A view at `scale` screen pixels per unit: centred on the graph, or its top-centre when
   * it is taller than the canvas. */
  private setScale(scale: number, rect: { width: number; height: number }): void {
    const width = rect.width / scale;
    const height = rect.height / scale;
    const x = this.full.x + (this.full.width - width) / 2;
    const y = height >= this.full.height ? this.full.y + (this.full.height - height) / 2
      : this.full.y;
    this.box = { x, y, width, height };
    this.apply();
  }

  /** Keep at least a margin of the graph inside the view, whatever panned it. */
  private keepInView(): void {
    const margin = (extent: number, view: number) => Math.min(extent, view) * 0.25;
    const mx = margin(this.full.width, this.box.width);
    const my = margin(this.full.height, this.box.height);
    this.box.x = clamp(this.box.x, this.full.x + mx - this.box.width,
      this.full.x + this.full.width - mx);
    this.box.y = clamp(this.box.y, this.full.y + my - this.box.height,
      this.full.y + this.full.height - my);
  }

  private apply(): void {
    this.lastSize = this.canvasSize() ?? this.lastSize;
    this.keepInView();
    const { x, y, width, height } = this.box;
    this.svg.setAttribute("viewBox", `${x} ${y} ${width} ${height}`);
  }

  private listen(target: EventTarget, type: string, handler: (e: Event) => void,
                 options?: AddEventListenerOptions): void {
    target.addEventListener(type, handler, options);
    this.cleanups.push(() => target.removeEventListener(type, handler, options));
  }

  private unitsPerPixel(): number {
    const rect = this.svg.getBoundingClientRect();
    return rect.width && rect.height
      ? Math.max(this.box.width / rect.width, this.box.height / rect.height) : 1;
  }

  private toSvg(clientX: number, clientY: number): [number, number] {
    const rect = this.svg.getBoundingClientRect();
    if (!rect.width || !rect.height) return [this.box.x, this.box.y];
    const scale = this.unitsPerPixel();
    const offsetX = (rect.width * scale - this.box.width) / 2;
    const offsetY = (rect.height * scale - this.box.height) / 2;
    return [this.box.x + (clientX - rect.left) * scale - offsetX,
      this.box.y + (clientY - rect.top) * scale - offsetY];
  }

  /** Ctrl/⌘ + wheel (and pinch) zooms; the wheel alone scrolls the graph, and the page once
   * the graph's edge is reached. */
  private onWheel(e: WheelEvent): void {
    if (e.ctrlKey || e.metaKey) {
      e.preventDefault();
      const [x, y] = this.toSvg(e.clientX, e.clientY);
      this.zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, x, y);
      return;
    }
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    const k = this.unitsPerPixel() * unit;
    const before = { ...this.box };
    this.box = { ...this.box, x: this.box.x + e.deltaX * k, y: this.box.y + e.deltaY * k };
    this.apply();
    if (this.box.x !== before.x || this.box.y !== before.y) e.preventDefault();
  }

  private onDown(e: PointerEvent): void {
    if (e.button !== 0) return;
    this.drag = { x: e.clientX, y: e.clientY, box: { ...this.box } };
    this.moved = false;
  }

  private onMove(e: PointerEvent): void {
    if (!this.drag) return;
    const scale = this.unitsPerPixel();
    const dx = (e.clientX - this.drag.x) * scale;
    const dy = (e.clientY - this.drag.y) * scale;
    if (Math.abs(e.clientX - this.drag.x) + Math.abs(e.clientY - this.drag.y) > 3) {
      this.moved = true;
    }
    this.box = { ...this.drag.box, x: this.drag.box.x - dx, y: this.drag.box.y - dy };
    this.apply();
  }
}

/** The bounding box of `element` in the SVG's user (viewBox) coordinates. `getBBox` is in
 * the element's own coordinates, which Graphviz shifts with a `translate(...)` on its root
 * group: map it through the elements' transforms. */
export function boxInSvg(svg: SVGSVGElement, element: SVGGraphicsElement): Box {
  const b = element.getBBox();
  const corners: [number, number][] = [[b.x, b.y], [b.x + b.width, b.y],
    [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]];
  const outer = svg.getScreenCTM?.();
  const inner = element.getScreenCTM?.();
  let map: (p: [number, number]) => [number, number];
  if (outer && inner && outer.a && outer.d) {
    const m = outer.inverse().multiply(inner);
    map = ([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
  } else {
    const chain = transformsUpTo(svg, element);
    map = (p) => chain.reduce((q, t) => t(q), p);
  }
  const points = corners.map(map);
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

/** The `translate`/`scale` transforms between an element and the SVG root, innermost first
 * (for DOMs without getScreenCTM). */
function transformsUpTo(svg: Element, element: Element): ((p: [number, number]) => [number, number])[] {
  const out: ((p: [number, number]) => [number, number])[] = [];
  for (let node: Element | null = element; node && node !== svg; node = node.parentElement) {
    const text = node.getAttribute("transform");
    if (!text) continue;
    const ops = Array.from(text.matchAll(/(translate|scale)\(\s*([-\d.eE+]+)[\s,]*([-\d.eE+]+)?\s*\)/g));
    for (const op of ops.reverse()) {
      const a = Number(op[2]);
      const b = op[3] === undefined ? (op[1] === "scale" ? a : 0) : Number(op[3]);
      out.push(op[1] === "translate" ? ([x, y]) => [x + a, y + b] : ([x, y]) => [x * a, y * b]);
    }
  }
  return out;
}

function labelFontUnits(svg: SVGSVGElement): number {
  const sizes = Array.from(svg.querySelectorAll("g.node text"))
    .map((t) => parseFloat(t.getAttribute("font-size") ?? ""))
    .filter((s) => Number.isFinite(s) && s > 0)
    .sort((a, b) => a - b);
  return sizes.length ? sizes[Math.floor(sizes.length / 2)] : 10;
}

function initialBox(svg: SVGSVGElement): Box {
  const raw = (svg.getAttribute("viewBox") ?? "").split(/[\s,]+/).map(Number);
  if (raw.length === 4 && raw.every(Number.isFinite) && raw[2] > 0 && raw[3] > 0) {
    return { x: raw[0], y: raw[1], width: raw[2], height: raw[3] };
  }
  const width = parseFloat(svg.getAttribute("width") ?? "") || 800;
  const height = parseFloat(svg.getAttribute("height") ?? "") || 600;
  return { x: 0, y: 0, width, height };
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}
