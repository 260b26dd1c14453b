// Parse Graphviz SVG (from the server's `dot` or from WebAssembly) into a DOM element with
// nothing executable left in it: no scripts, no foreign HTML, no event handlers, no links
// outside the document.

const FORBIDDEN_ELEMENTS = new Set(["script", "foreignobject", "iframe", "object", "embed",
  "image", "use", "animate", "set", "animatetransform", "animatemotion", "handler"]);
const SVG_NS = "http://www.w3.org/2000/svg";

export function sanitizeSvgElement(root: Element): void {
  const doomed: Element[] = [];
  const walk = (node: Element) => {
    const name = node.localName.toLowerCase();
    if (FORBIDDEN_ELEMENTS.has(name) || (node.namespaceURI !== SVG_NS && node !== root)) {
      doomed.push(node);
      return;
    }
    for (const attr of Array.from(node.attributes)) {
      const key = attr.name.toLowerCase();
      const value = attr.value.trim().toLowerCase();
      const isLink = key === "href" || key.endsWith(":href");
      if (key.startsWith("on") || (isLink && !value.startsWith("#")) ||
          value.startsWith("javascript:") || key === "style" && value.includes("url(")) {
        node.removeAttribute(attr.name);
      }
    }
    for (const child of Array.from(node.children)) walk(child);
  };
  walk(root);
  for (const node of doomed) node.remove();
}

/** The SVG text as a sanitized element, or null when it is not SVG. */
export function parseSvg(text: string, doc: Document = document): SVGSVGElement | null {
  const start = text.indexOf("<svg");
  if (start < 0) return null;
  const parsed = new DOMParser().parseFromString(text.slice(start), "image/svg+xml");
  const root = parsed.documentElement;
  if (!root || root.localName !== "svg" || parsed.getElementsByTagName("parsererror").length) {
    return null;
  }
  sanitizeSvgElement(root);
  return doc.importNode(root, true) as unknown as SVGSVGElement;
}
