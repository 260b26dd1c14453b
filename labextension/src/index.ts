// The anywidget entry point for both jitviz widgets (jitviz/explorer/widget.py).

import { renderExplorer } from "./explorer";
import { renderMonitor } from "./monitor";
import type { WidgetModel } from "./types";

function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  el.classList.add("jitviz-widget");
  return model.get("widget") === "monitor" ? renderMonitor(model, el) : renderExplorer(model, el);
}

export default { render };
