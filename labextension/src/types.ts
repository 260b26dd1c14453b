// Shapes of the data the Python widget syncs (jitviz/explorer/graph.py, widget.py).

import type { AnyModel } from "@anywidget/types";

export interface SourceLine {
  file: string;
  line: number;
  function: string;
  code: string;
  where?: string; // "cell 3, line 2" in a notebook
}

export interface Operand {
  name: string;
  type: string;
  shape: number[];
  dtype: string;
  literal?: boolean;
  origin?: string;
}

/** Fields every node has. */
interface NodeBase {
  id: string;
  label: string;
  cluster: string | null; // the cluster node it is drawn inside
}

/** The abstract value of an input, output or constant (compact graphs leave out empty ones). */
interface ValueFields {
  shape?: number[];
  dtype?: string;
  type?: string; // "f32[3]"
}

/** An argument of the traced function, or of a sub-jaxpr (`inner`). */
export interface InputNode extends NodeBase, ValueFields {
  kind: "input";
  name?: string;
  var?: string;
  inner?: boolean;
}

/** A result of the program, or of a sub-jaxpr (`inner`). */
export interface OutputNode extends NodeBase, ValueFields {
  kind: "output";
  var?: string;
  inner?: boolean;
}

/** A value baked into the program: a constvar, or a literal read from a global or a closure. */
export interface ConstantNode extends NodeBase, ValueFields {
  kind: "constant";
  name?: string;
  var?: string;
  value?: string;
  origin?: string; // "global", "closure", "computed"
  source?: SourceLine | null;
  stale?: boolean; // the global changed since the trace
  now?: string; // its value now, when stale
}

/** What an equation node says about the operation (a cluster of sub-jaxprs is one too). */
interface OperationFields {
  primitive?: string;
  params?: Record<string, string>;
  inputs?: Operand[];
  outputs?: Operand[];
  source?: SourceLine | null;
  kernel?: string | null; // the kernel it was compiled into
  changed?: string | null; // "added" when new in this stage
  shape?: number[]; // of its first result (left out of compact graphs: outputs say it)
  dtype?: string;
  type?: string;
}

/** One equation of the program. */
export interface EquationNode extends NodeBase, OperationFields {
  kind: "equation";
  primitive: string;
}

/** A box around other nodes: an equation with sub-jaxprs (cond, scan, jit: `primitive` set),
 * one of its bodies (`role` "body"), a compiled kernel ("kernel") or a block of consecutive
 * equations of a long program ("block"). */
export interface ClusterNode extends NodeBase, OperationFields {
  kind: "cluster";
  role?: "body" | "kernel" | "block";
  size?: number; // equations inside, at any depth
  summary?: string; // a block's most common primitives
}

/** A side effect that ran only while tracing (a print, a mutation, a leaked tracer). */
export interface EffectNode extends NodeBase {
  kind: "effect";
  effect: string;
  times?: number;
  text?: string;
  skipped?: number; // cache hits that skipped it
  source?: SourceLine | null;
}

export type GraphNode = InputNode | OutputNode | ConstantNode | EquationNode | ClusterNode | EffectNode;

export type NodeKind = GraphNode["kind"];

/** Every field of every kind, all optional: for code that reads any node the same way
 * (search), where a field a kind lacks simply reads as undefined. */
export type AnyNodeFields = Partial<Omit<InputNode, "kind"> & Omit<OutputNode, "kind"> &
  Omit<ConstantNode, "kind"> & Omit<EquationNode, "kind"> & Omit<ClusterNode, "kind"> &
  Omit<EffectNode, "kind">> & { kind: NodeKind };

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  kind: "data" | "constant" | "effect";
  label: string;
}

export interface KernelInfo {
  name: string;
  source: string;
  equations: number;
  reused: boolean;
  lines: SourceLine[];
}

export interface StageDiff {
  added: number;
  removed: number;
  added_by_primitive: Record<string, number>;
  removed_by_primitive: Record<string, number>;
}

export interface Graph {
  title: string;
  nodes: GraphNode[];
  edges?: GraphEdge[]; // not synced (the view has the drawn edges)
  kernels: Record<string, KernelInfo>;
  collapsed: string[];
  stats: { equations: number; nodes: number; edges: number };
  diff: StageDiff | null;
  stale?: StaleBinding[];
}

/** A global or closed-over variable that changed since the trace baked its value in. */
export interface StaleBinding {
  name: string;
  kind: string;
  traced: string;
  now: string;
}

/** What is drawn: visible nodes, expanded clusters, and edges between visible nodes. */
export interface GraphView {
  nodes: string[];
  clusters: string[];
  edges: [string, string, string][];
}

export interface StageRow {
  name: string;
  equations: number;
  kernels?: number;
}

export interface SignatureChange {
  argument: string;
  before: string;
  after: string;
}

export interface SpecializationRow {
  index: number;
  signature: string;
  hits: number | null;
  backend: string;
  compiled: boolean;
  kernels: number;
  reason: string;
  diff: SignatureChange[];
}

export interface JitEvent {
  index: number;
  kind: string;
  time: number;
  signature: string;
  function: string;
  message: string;
  count: number;
  reason?: string;
  [detail: string]: unknown;
}

export interface FunctionRow {
  name: string;
  hits: number;
  misses: number;
  entries: number;
  traces: number;
  compiles: number;
}

/** The traits both widgets sync (widget.py's `_JitvizWidget`). These are type aliases, not
 * interfaces: anywidget's `AnyModel<T>` wants a `Record<string, any>`. */
export type WidgetTraits = {
  widget: "explorer" | "monitor";
  title: string;
};

/** The explorer's traits (widget.py's `Explorer`). */
export type ExplorerTraits = WidgetTraits & {
  graph: string; // the compact graph as JSON text (graphIndex.ts's `expandGraph` reads it)
  view: GraphView;
  dot: string; // set only when `svg` is empty: the browser lays the graph out
  svg: string;
  renderer: string; // "dot" (SVG from the kernel) or "wasm"
  jaxpr: string;
  stages: StageRow[];
  stage: string;
  specializations: SpecializationRow[];
  specialization: number;
  events: JitEvent[];
  collapsed: string[];
  selected: string;
  error: string;
  pending: number; // jit events since what is shown
  updated: string;
  previous_run?: PreviousRun | Record<string, never>; // {} when none is kept
};

/** The previous run of the cell that defines the function (widget.py's `previous_run`). */
export interface PreviousRun {
  label: string;
  name: string;
  where: string;
  signatures: string[];
}

/** The live monitor's traits (widget.py's `MonitorWidget`). */
export type MonitorTraits = WidgetTraits & {
  events: JitEvent[];
  functions: FunctionRow[];
};

export type ExplorerModel = AnyModel<ExplorerTraits>;
export type MonitorModel = AnyModel<MonitorTraits>;

/** One differing field (jitviz.diff's Change): `label` is the field in words. */
export interface DiffChange {
  field: string;
  label?: string;
  before: string;
  after: string;
}

export type DiffStatus = "unchanged" | "changed" | "added" | "removed";

export interface DiffRow {
  status: DiffStatus;
  primitive: string;
  a: string | null;
  b: string | null;
  source: SourceLine | null;
  changes: DiffChange[];
  note: string;
  subs: { title: string; rows: DiffRow[] }[];
}

/** What to compare: a specialization (its index) at a stage. */
export interface DiffPick {
  specialization: number;
  stage: string;
}

/** One program's graph in a diff: the server's SVG, or DOT for the browser to lay out. */
export interface DiffGraph {
  svg: string;
  dot: string;
  too_large: boolean;
}

/** Both graphs of a diff (jitviz.diff.views.graph_data). */
export interface DiffGraphs {
  a: DiffGraph;
  b: DiffGraph;
  /** [a node id, b node id] of matched equations, as drawn. */
  pairs: [string, string][];
  /** status -> [fill, border] */
  colors: Partial<Record<DiffStatus, [string, string]>>;
}

/** A diff the kernel sent on request (widget.py's `diff_data`: ProgramDiff.to_dict()). */
export interface DiffData {
  a: string;
  b: string;
  empty: boolean;
  summary: Record<DiffStatus, number>;
  inputs: DiffChange[];
  outputs: DiffChange[];
  constants: DiffChange[];
  rows: DiffRow[];
  cut?: number;
  a_pick?: DiffPick;
  b_pick?: DiffPick;
  previous?: boolean;
  previous_run?: boolean;
  graphs?: DiffGraphs;
}
