/**
 * What a change to a stack means, compared plan document to plan document (the JSON contract of `plan --json`): workloads
 * added, removed and re-planned with every planned value old → new and the new reason, fit verdicts that flip, memory
 * headroom, node pools and hourly cost. Pure.
 */
import { capacityCostNote } from "../../core/pools";
import { round3 } from "../../core/quantity";
import type { planDocument } from "../plan/document";
import { noFits, type NoFit } from "./fit";

/** A plan document, as `plan --json` prints it. */
export type PlanDocument = ReturnType<typeof planDocument>;
type WorkloadDoc = PlanDocument["workloads"][number];
type PoolDoc = PlanDocument["pools"][number];

/** One planned value that changed. */
export interface ValueChange {
  readonly key: string;
  readonly before: unknown;
  readonly after: unknown;
  /** The planner's reason for the new value, when it gave one. */
  readonly reason?: string;
}

/** One workload present before and after. */
export interface WorkloadChange {
  readonly name: string;
  readonly changes: readonly ValueChange[];
  readonly fitsBefore: boolean;
  readonly fitsAfter: boolean;
  /** The memories it does not fit in (GPU memory, host memory), before and after; empty where it fits. */
  readonly doesNotFitIn: { readonly before: readonly NoFit[]; readonly after: readonly NoFit[] };
  /** GiB left per GPU (usable minus required), before and after. */
  readonly headroomGiB: { readonly before: number; readonly after: number };
  /** The job's GPU nodes at on-demand price, USD per hour, before and after. */
  readonly usdPerHour: { readonly before: number; readonly after: number };
  /** Wall time and cost of one run (the plan's forecast), before and after; null where the plan cannot forecast. */
  readonly perRun: { readonly before: RunFigures | null; readonly after: RunFigures | null };
}

/** A job's forecast wall time and cost of one run. */
export interface RunFigures {
  readonly wallSeconds: number;
  readonly costUsd: number;
  /** Spot nodes: the cost is at most this. */
  readonly costIsUpperBound: boolean;
}

/** One pool present before or after (or both). */
export interface PoolChange {
  readonly name: string;
  readonly status: "added" | "removed" | "changed";
  readonly changes: readonly ValueChange[];
  readonly usdPerHourAtMax: { readonly before: number; readonly after: number };
  /**
   * What the pool may cost on its capacity type after the change, when it is spot or spot-with-fallback: the price
   * varies, and its worst case is every node on demand.
   */
  readonly capacityNote?: string;
}

/** Everything that changed in one stack. */
export interface StackDiff {
  readonly environment: string;
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly WorkloadChange[];
  readonly pools: readonly PoolChange[];
  /** Sum of the workloads' GPUs, before and after. */
  readonly gpus: { readonly before: number; readonly after: number };
  /** Sum of every pool's cost at max, USD per hour, before and after. */
  readonly usdPerHourAtMax: { readonly before: number; readonly after: number };
  /** Sum of every job's cost while it runs (its GPU nodes at on-demand price), USD per hour, before and after. */
  readonly jobsUsdPerHour: { readonly before: number; readonly after: number };
  /** Sum of every forecast job's cost of one run, USD, before and after (jobs the plan cannot forecast count 0). */
  readonly jobsUsdPerRun: { readonly before: number; readonly after: number };
  /** For each added workload, its forecast run (null where the plan cannot forecast). */
  readonly addedPerRun: { readonly [workload: string]: RunFigures | null };
  /** Workloads that do not fit (GPU or host memory) after the change but did before, or are new. */
  readonly stopsFitting: readonly string[];
  /** For each workload of `stopsFitting`, the memories it does not fit in (GPU memory, host memory, or both). */
  readonly stopsFittingIn: { readonly [workload: string]: readonly NoFit[] };
}

/** `{ a: { b: 1 } }` as `[["a.b", 1]]`; arrays and scalars are leaves. */
function flatten(value: unknown, prefix = ""): [string, unknown][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [[prefix, value]];
  return Object.entries(value).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
}

/** What counts as a planned value of a workload: everything but the reasons and the memory breakdown's parts. */
function plannedValues(w: WorkloadDoc): Map<string, unknown> {
  const { decisions: _decisions, memory, advice: _advice, ...rest } = w;
  return new Map(flatten({ ...rest, memory: { requiredGiB: memory.requiredGiB, fits: memory.fits } }));
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Every key whose value differs between two flattened views, with the new reason where the planner gave one. */
function valueChanges(before: Map<string, unknown>, after: Map<string, unknown>, reasons: Map<string, string>) {
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  return keys
    .filter((k) => !same(before.get(k), after.get(k)))
    .map((key): ValueChange => {
      const reason = reasons.get(key);
      return { key, before: before.get(key), after: after.get(key), ...(reason ? { reason } : {}) };
    });
}

/** USD per hour of a job's GPU nodes: its worker pods (one per node) at its pool's per-node price. */
function jobUsdPerHour(w: WorkloadDoc, pools: readonly PoolDoc[]): number {
  const pool = pools.find((p) => p.name === w.nodePool);
  return pool ? round3((w.worker.replicas * pool.usdPerHourAtMax) / pool.maxNodes) : 0;
}

const headroom = (w: WorkloadDoc) => round3(w.memory.usableGiB - w.memory.requiredGiB);

/** A job's forecast run, or null where its plan has no forecast. */
export function runFigures(w: WorkloadDoc): RunFigures | null {
  const f = w.forecast;
  return f ? { wallSeconds: f.wallSeconds, costUsd: f.costUsd, costIsUpperBound: f.costIsUpperBound } : null;
}

function workloadChange(b: WorkloadDoc, a: WorkloadDoc, base: PlanDocument, head: PlanDocument): WorkloadChange {
  const reasons = new Map(a.decisions.map((d) => [d.key, d.reason]));
  return {
    name: a.name,
    changes: valueChanges(plannedValues(b), plannedValues(a), reasons),
    fitsBefore: b.fits,
    fitsAfter: a.fits,
    doesNotFitIn: { before: noFits(b), after: noFits(a) },
    headroomGiB: { before: headroom(b), after: headroom(a) },
    usdPerHour: { before: jobUsdPerHour(b, base.pools), after: jobUsdPerHour(a, head.pools) },
    perRun: { before: runFigures(b), after: runFigures(a) },
  };
}

function poolChanges(base: readonly PoolDoc[], head: readonly PoolDoc[]): PoolChange[] {
  const names = [...new Set([...base, ...head].map((p) => p.name))];
  const fields = (p: PoolDoc | undefined) =>
    new Map(
      p
        ? flatten({
            instanceType: p.instanceType,
            minNodes: p.minNodes,
            maxNodes: p.maxNodes,
            capacityType: p.capacityType,
            spotWaitMinutes: p.spotWaitMinutes,
          })
        : [],
    );
  return names.flatMap((name): PoolChange[] => {
    const b = base.find((p) => p.name === name);
    const a = head.find((p) => p.name === name);
    const changes = valueChanges(fields(b), fields(a), new Map());
    if (changes.length === 0) return [];
    const status = !b ? "added" : !a ? "removed" : "changed";
    const note = a ? capacityCostNote(a) : "";
    return [
      {
        name,
        status,
        changes,
        usdPerHourAtMax: { before: b?.usdPerHourAtMax ?? 0, after: a?.usdPerHourAtMax ?? 0 },
        ...(note ? { capacityNote: note } : {}),
      },
    ];
  });
}

/** A stack that does not exist on one side: no pools, no workloads (its environment is taken from the other side). */
const EMPTY: PlanDocument = {
  stack: null,
  environment: "dev",
  region: "",
  namespace: "",
  pools: [],
  workloads: [],
  notRendered: [],
  queue: null,
};

/** Compares the plan at the base with the plan now; a stack missing on one side counts as empty there. */
export function diffPlans(baseDoc: PlanDocument | undefined, headDoc: PlanDocument | undefined): StackDiff {
  const base = baseDoc ?? EMPTY;
  const head = headDoc ?? EMPTY;
  const byName = (doc: PlanDocument) => new Map(doc.workloads.map((w) => [w.name, w]));
  const [b, a] = [byName(base), byName(head)];
  const changed = [...a.values()]
    .filter((w) => b.has(w.name))
    .map((w) => workloadChange(b.get(w.name)!, w, base, head))
    .filter((c) => c.changes.length > 0);
  const added = [...a.keys()].filter((n) => !b.has(n));
  const sum = (xs: readonly number[]) => round3(xs.reduce((n, x) => n + x, 0));
  const stopsFitting = [
    ...changed.filter((c) => c.fitsBefore && !c.fitsAfter).map((c) => c.name),
    ...added.filter((n) => !a.get(n)!.fits),
  ];
  return {
    environment: (headDoc ?? base).environment,
    added,
    removed: [...b.keys()].filter((n) => !a.has(n)),
    changed,
    pools: poolChanges(base.pools, head.pools),
    gpus: { before: sum(base.workloads.map((w) => w.gpus)), after: sum(head.workloads.map((w) => w.gpus)) },
    usdPerHourAtMax: {
      before: sum(base.pools.map((p) => p.usdPerHourAtMax)),
      after: sum(head.pools.map((p) => p.usdPerHourAtMax)),
    },
    jobsUsdPerHour: {
      before: sum(base.workloads.map((w) => jobUsdPerHour(w, base.pools))),
      after: sum(head.workloads.map((w) => jobUsdPerHour(w, head.pools))),
    },
    jobsUsdPerRun: {
      before: sum(base.workloads.map((w) => w.forecast?.costUsd ?? 0)),
      after: sum(head.workloads.map((w) => w.forecast?.costUsd ?? 0)),
    },
    addedPerRun: Object.fromEntries(added.map((n) => [n, runFigures(a.get(n)!)])),
    stopsFitting,
    stopsFittingIn: Object.fromEntries(stopsFitting.map((n) => [n, noFits(a.get(n)!)])),
  };
}
