// Pan (drag) and zoom (wheel, buttons) an SVG by changing its viewBox.

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export class PanZoom {
  private box: Box;
  private readonly full: Box;
  private drag: { x: number; y: number; box: Box } | null = null;
  private readonly cleanups: (() => void)[] = [];
  moved = false; // true while a drag moved the view (so the click that ends it is ignored)

  constructor(private readonly svg: SVGSVGElement, private readonly host: HTMLElement) {
    this.full = initialBox(svg);
    this.box = { ...this.full };
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    this.apply();
    this.listen(host, "wheel", (e) => this.onWheel(e as WheelEvent), { passive: false });
    this.listen(host, "pointerdown", (e) => this.onDown(e as PointerEvent));
    this.listen(window, "pointermove", (e) => this.onMove(e as PointerEvent));
    this.listen(window, "pointerup", () => (this.drag = null));
  }

  get viewBox(): Box {
    return { ...this.box };
  }

  fit(): void {
    this.box = { ...this.full };
    this.apply();
  }

  /** Fit, unless that makes text unreadably small: then fill the width (at most 1:1) and
   * show the top of the graph, where its inputs are. */
  readable(minScale = 0.6): void {
    const rect = this.host.getBoundingClientRect();
    if (!rect.width || !rect.height) return this.fit();
    const fitScale = Math.min(rect.width / this.full.width, rect.height / this.full.height);
    if (fitScale >= minScale) return this.fit();
    const scale = Math.max(minScale, Math.min(1, rect.width / this.full.width));
    const width = rect.width / scale;
    const height = rect.height / scale;
    this.box = { x: this.full.x + (this.full.width - width) / 2, y: this.full.y, width, height };
    this.apply();
  }

  /** Zoom by `factor` (>1 zooms in) around a point in SVG coordinates (default: centre). */
  zoom(factor: number, cx?: number, cy?: number): void {
    const x = cx ?? this.box.x + this.box.width / 2;
    const y = cy ?? this.box.y + this.box.height / 2;
    const width = clamp(this.box.width / factor, this.full.width / 200, this.full.width * 4);
    const scale = width / this.box.width;
    const height = this.box.height * scale;
    this.box = { x: x - (x - this.box.x) * scale, y: y - (y - this.box.y) * scale, width, height };
    this.apply();
  }

  /** Centre the view on a box (SVG coordinates), zooming in no further than 1:1. */
  show(target: Box): void {
    const width = Math.max(this.box.width, target.width * 1.5);
    const height = width * (this.box.height / this.box.width);
    this.box = { x: target.x + target.width / 2 - width / 2,
      y: target.y + target.height / 2 - height / 2, width, height };
    this.apply();
  }

  destroy(): void {
    for (const cleanup of this.cleanups) cleanup();
  }

  private apply(): void {
    const { x, y, width, height } = this.box;
    this.svg.setAttribute("viewBox", `${x} ${y} ${width} ${height}`);
  }

  private listen(target: EventTarget, type: string, handler: (e: Event) => void,
                 options?: AddEventListenerOptions): void {
    target.addEventListener(type, handler, options);
    this.cleanups.push(() => target.removeEventListener(type, handler, options));
  }

  private toSvg(clientX: number, clientY: number): [number, number] {
    const rect = this.svg.getBoundingClientRect();
    if (!rect.width || !rect.height) return [this.box.x, this.box.y];
    const scale = Math.max(this.box.width / rect.width, this.box.height / rect.height);
    const offsetX = (rect.width * scale - this.box.width) / 2;
    const offsetY = (rect.height * scale - this.box.height) / 2;
    return [this.box.x + (clientX - rect.left) * scale - offsetX,
      this.box.y + (clientY - rect.top) * scale - offsetY];
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    const [x, y] = this.toSvg(e.clientX, e.clientY);
    this.zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, x, y);
  }

  private onDown(e: PointerEvent): void {
    if (e.button !== 0) return;
    this.drag = { x: e.clientX, y: e.clientY, box: { ...this.box } };
    this.moved = false;
  }

  private onMove(e: PointerEvent): void {
    if (!this.drag) return;
    const rect = this.svg.getBoundingClientRect();
    const scale = rect.width ? Math.max(this.box.width / rect.width,
      this.box.height / rect.height) : 1;
    const dx = (e.clientX - this.drag.x) * scale;
    const dy = (e.clientY - this.drag.y) * scale;
    if (Math.abs(e.clientX - this.drag.x) + Math.abs(e.clientY - this.drag.y) > 3) {
      this.moved = true;
    }
    this.box = { ...this.drag.box, x: this.drag.box.x - dx, y: this.drag.box.y - dy };
    this.apply();
  }
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
