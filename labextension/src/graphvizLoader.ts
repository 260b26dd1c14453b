// Get the WebAssembly Graphviz bundle from the kernel and import it once per page, shared by
// every explorer: it is asked for with a custom message, answered with the file's bytes (it is
// not synced, so saved notebooks do not carry it).

import type { GraphvizModule } from "./render";
import type { AnyModel } from "@anywidget/types";

const CACHE_KEY = "__jitvizGraphviz";
type Cache = { [CACHE_KEY]?: Promise<GraphvizModule> };

export function graphvizLoader(model: AnyModel, timeoutMs = 60000): () => Promise<GraphvizModule> {
  return () => {
    const cache = globalThis as unknown as Cache;
    if (!cache[CACHE_KEY]) {
      cache[CACHE_KEY] = fetchModule(model, timeoutMs).catch((err) => {
        delete cache[CACHE_KEY]; // let a later drawing try again
        throw err;
      });
    }
    return cache[CACHE_KEY]!;
  };
}

function fetchModule(model: AnyModel, timeoutMs: number): Promise<GraphvizModule> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      model.off("msg:custom", onMessage);
      reject(new Error("the kernel did not send the Graphviz module (is it still running?)"));
    }, timeoutMs);
    function onMessage(msg: { type?: string }, buffers?: (ArrayBuffer | DataView)[]) {
      if (msg?.type !== "graphviz") return;
      clearTimeout(timer);
      model.off("msg:custom", onMessage);
      const code = buffers?.[0];
      if (!code) {
        reject(new Error("the kernel sent no Graphviz module"));
        return;
      }
      importCode(code).then(resolve, reject);
    }
    model.on("msg:custom", onMessage);
    model.send({ type: "graphviz" });
  });
}

async function importCode(code: ArrayBuffer | DataView): Promise<GraphvizModule> {
  const bytes = code instanceof DataView
    ? new Uint8Array(code.buffer as ArrayBuffer, code.byteOffset, code.byteLength)
    : new Uint8Array(code);
  const blob = new Blob([bytes], { type: "text/javascript" });
  const url = URL.createObjectURL(blob);
  try {
    return (await import(/* @vite-ignore */ url)) as GraphvizModule;
  } finally {
    URL.revokeObjectURL(url);
  }
}
