// Shapes of the data the Python widget syncs (jitviz/explorer/graph.py, widget.py).

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

export type NodeKind = "input" | "output" | "constant" | "equation" | "effect" | "cluster";

export interface GraphNode {
  id: string;
  kind: NodeKind;
  label: string;
  cluster: string | null;
  primitive?: string;
  params?: Record<string, string>;
  inputs?: Operand[];
  outputs?: Operand[];
  shape?: number[];
  dtype?: string;
  type?: string;
  var?: string;
  name?: string;
  source?: SourceLine | null;
  kernel?: string | null;
  changed?: string | null;
  value?: string;
  origin?: string;
  stale?: boolean;
  now?: string;
  effect?: string;
  text?: string;
  skipped?: number;
  size?: number;
  role?: string;
  summary?: string;
  inner?: boolean;
}

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

/** The part of anywidget's model the views use. */
export interface WidgetModel {
  get(name: string): any;
  set(name: string, value: unknown): void;
  save_changes(): void;
  on(event: string, callback: (...args: any[]) => void): void;
  off(event: string, callback: (...args: any[]) => void): void;
  send(content: object, callbacks?: unknown, buffers?: ArrayBuffer[]): void;
}

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
}
