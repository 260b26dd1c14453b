// The anywidget entry point for both jitviz widgets (jitviz/explorer/widget.py).

import type { AnyWidget, RenderProps } from "@anywidget/types";
import { renderExplorer } from "./explorer";
import { renderMonitor } from "./monitor";
import type { ExplorerModel, MonitorModel, WidgetTraits } from "./types";

/** Both widgets share this module: the `widget` trait says which one a model is. (The views
 * need only the model and the element of anywidget's render props.) */
function render({ model, el }: Pick<RenderProps<WidgetTraits>, "model" | "el">): () => void {
  el.classList.add("jitviz-widget");
  return model.get("widget") === "monitor"
    ? renderMonitor(model as unknown as MonitorModel, el)
    : renderExplorer(model as unknown as ExplorerModel, el);
}

export default { render } satisfies AnyWidget<WidgetTraits>;
