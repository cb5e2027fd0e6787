/**
 * The words of `ray-gpu diff`: a summary line a PR title could carry, the `--fail-on` rules, and the text and JSON
 * views (the Markdown view is in ./markdown).
 */
import { round3 } from "../../core/quantity";
import { stableJson } from "../../core/serialize";
import { durationText } from "../../core/forecast/job";
import { costText } from "../plan/forecast-text";
import type { RunFigures, StackDiff, ValueChange, WorkloadChange } from "./compare";
import { noFitDetail, noFitWhere } from "./fit";
import { statefulLosses, type InputChange, type ResourceChange } from "./resources";

/** One stack's diff: the plan's, and the platform resources' (null when they were not previewed, with why). */
export interface StackReport {
  readonly stack: string;
  readonly diff: StackDiff;
  readonly resources: readonly ResourceChange[] | null;
  /**
   * Why `resources` is null: `--no-preview`, a stack file added or removed (removing one destroys nothing), or a side
   * whose program would fail (a workload that does not fit).
   */
  readonly notPreviewed?: string;
}

/**
 * A `--fail-on` rule: `no-fit`, `replace`, `prod-lifecycle`, `cost:<usd-per-hour>` or `run-cost:<usd>` (a job whose
 * forecast cost of one run rises by more, or a new job's that exceeds it).
 */
export type FailRule =
  | { kind: "no-fit" }
  | { kind: "replace" }
  | { kind: "prod-lifecycle" }
  | { kind: "cost"; usdPerHour: number }
  | { kind: "run-cost"; usdPerRun: number };

const signed = (n: number, digits = 0) => `${n >= 0 ? "+" : "-"}${Math.abs(n).toFixed(digits)}`;
export const usd = (n: number) => `${n >= 0 ? "+" : "-"}$${Math.abs(n).toFixed(2)}`;
const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;

/** A resource by its kind and name: `aws:s3/bucket:Bucket ray-gpu-storage-bucket` as `Bucket ray-gpu-storage-bucket`. */
export const resourceName = (r: { type: string; name: string }) => `${r.type.split(":").pop()} ${r.name}`;

/** "REPLACES Bucket ray-gpu-storage-bucket in prod", one per stateful resource a stack replaces or deletes. */
export function lossPhrases(stacks: readonly StackReport[]): string[] {
  return stacks.flatMap((s) =>
    statefulLosses(s.resources ?? []).map(
      (c) => `${c.status === "removed" ? "DELETES" : "REPLACES"} ${resourceName(c)} in ${s.stack}`,
    ),
  );
}

/** The replacements part of the summary: "0 replacements", or "2 replacements (REPLACES Bucket … in prod)". */
function replacementsPart(stacks: readonly StackReport[]): string {
  const previewed = stacks.filter((s) => s.resources !== null);
  if (previewed.length === 0) return "resources not previewed";
  const replaced = previewed.flatMap((s) => s.resources ?? []).filter((c) => c.status === "replaced").length;
  const losses = lossPhrases(stacks);
  const skipped = stacks.length - previewed.length;
  return (
    `${plural(replaced, "replacement")}${losses.length ? ` (${losses.join(", ")})` : ""}` +
    (skipped ? `, ${plural(skipped, "stack")} not previewed` : "")
  );
}

/** `f` of each stack's diff, summed over the stacks. */
const totalOf = (stacks: readonly StackReport[], f: (d: StackDiff) => number) =>
  stacks.reduce((n, s) => n + f(s.diff), 0);
/** How far a before/after figure moved. */
const moved = (x: { readonly before: number; readonly after: number }) => x.after - x.before;

/**
 * The costs a change moves over all stacks: the jobs' while they run and the pools' at max (USD per hour), and the
 * jobs' forecast cost of one run (USD).
 */
export function costDeltas(stacks: readonly StackReport[]): {
  readonly jobs: number;
  readonly poolsAtMax: number;
  readonly perRun: number;
} {
  return {
    jobs: totalOf(stacks, (d) => moved(d.jobsUsdPerHour)),
    poolsAtMax: totalOf(stacks, (d) => moved(d.usdPerHourAtMax)),
    perRun: totalOf(stacks, (d) => moved(d.jobsUsdPerRun)),
  };
}

/** A forecast run in words: "1 h 05 min, $5.70", "at most $5.70" on spot; "no forecast" where there is none. */
export const runText = (r: RunFigures | null) => (r ? `${durationText(r.wallSeconds)}, ${costText(r)}` : "no forecast");

/** How much more one run of a re-planned job costs (a side without a forecast counts 0). */
const runCostDelta = (c: WorkloadChange) => (c.perRun.after?.costUsd ?? 0) - (c.perRun.before?.costUsd ?? 0);

/**
 * "+8 GPUs, +$16.29/h for jobs, +$12.40 per run of the jobs, +$40.96/h for pools at max, 1 workload re-planned, 1
 * added, 0 removed, 1 stops fitting, 0 replacements". The jobs' figures are the sums of the job lines' `/h` and runs.
 */
export function summaryLine(stacks: readonly StackReport[]): string {
  const total = (f: (d: StackDiff) => number) => totalOf(stacks, f);
  const gpus = total((d) => moved(d.gpus));
  const cost = costDeltas(stacks);
  const stops = total((d) => d.stopsFitting.length);
  return (
    `${signed(gpus)} GPUs, ${usd(cost.jobs)}/h for jobs, ${usd(cost.perRun)} per run of the jobs, ` +
    `${usd(cost.poolsAtMax)}/h for pools at max, ${plural(
      total((d) => d.changed.length),
      "workload",
    )} re-planned, ` +
    `${total((d) => d.added.length)} added, ${total((d) => d.removed.length)} removed, ` +
    `${stops} stop${stops === 1 ? "s" : ""} fitting, ${replacementsPart(stacks)}`
  );
}

/** Changes that take a prod job's safety away: fewer retries, a lost deadline, or its failed head no longer kept. */
export function lifecycleLosses(c: WorkloadChange): ValueChange[] {
  const lower = (ch: ValueChange) =>
    typeof ch.before === "number" && (typeof ch.after !== "number" || ch.after < ch.before);
  return c.changes.filter(
    (ch) =>
      ((ch.key === "lifecycle.backoffLimit" || ch.key === "train.maxFailures") && lower(ch)) ||
      (ch.key.endsWith("DeadlineSeconds") && ch.key.startsWith("lifecycle.") && ch.after === undefined) ||
      (ch.key === "lifecycle.cleanup.mode" && ch.before === "rules"),
  );
}

/** What each rule says about the stacks, one line per finding. */
const RULES: { readonly [K in FailRule["kind"]]: (s: readonly StackReport[], r: FailRule & { kind: K }) => string[] } =
  {
    "no-fit": (stacks) =>
      stacks.flatMap((s) =>
        s.diff.stopsFitting.map((w) => {
          const fits = s.diff.stopsFittingIn[w] ?? [];
          return `no-fit: ${w} does not fit in ${noFitWhere(fits)}${fits.length ? ` (${noFitDetail(fits)})` : ""}`;
        }),
      ),
    replace: (stacks) => [
      ...stacks.flatMap((s) =>
        statefulLosses(s.resources ?? []).map(
          (c) =>
            `replace: ${s.stack} ${c.status === "removed" ? "deletes" : "replaces"} ${resourceName(c)}: ${c.loses}`,
        ),
      ),
      // A stack whose program would fail cannot be cleared by this rule (an added or removed stack file can).
      ...stacks
        .filter((s) => s.notPreviewed?.startsWith("the program would fail"))
        .map((s) => `replace: ${s.stack} could not be previewed: ${s.notPreviewed}`),
    ],
    "prod-lifecycle": (stacks) =>
      stacks
        .filter((s) => s.diff.environment === "prod")
        .flatMap((s) =>
          s.diff.changed.flatMap((c) => lifecycleLosses(c).map((ch) => `prod-lifecycle: ${c.name} ${describe(ch)}`)),
        ),
    "run-cost": (stacks, rule) =>
      stacks.flatMap((s) => [
        ...s.diff.changed
          .filter((c) => runCostDelta(c) > rule.usdPerRun)
          .map(
            (c) =>
              `run-cost: ${c.name} costs ${usd(runCostDelta(c))} more per run (${runText(c.perRun.before)} → ` +
              `${runText(c.perRun.after)}), over +$${rule.usdPerRun.toFixed(2)}`,
          ),
        ...Object.entries(s.diff.addedPerRun)
          .filter(([, r]) => (r?.costUsd ?? 0) > rule.usdPerRun)
          .map(([n, r]) => `run-cost: new job ${n} costs ${runText(r)} per run, over $${rule.usdPerRun.toFixed(2)}`),
      ]),
    cost: (stacks, rule) => {
      const { jobs, poolsAtMax } = costDeltas(stacks);
      const limit = `exceeds +$${rule.usdPerHour.toFixed(2)}/h`;
      return [
        ...(jobs > rule.usdPerHour ? [`cost: the jobs' cost while they run ${usd(jobs)}/h ${limit}`] : []),
        ...(poolsAtMax > rule.usdPerHour ? [`cost: the pools' cost at max ${usd(poolsAtMax)}/h ${limit}`] : []),
      ];
    },
  };

/** Each rule that fires, with why; empty when none does. */
export function firedRules(stacks: readonly StackReport[], rules: readonly FailRule[]): string[] {
  return rules.flatMap((rule) =>
    (RULES[rule.kind] as (s: readonly StackReport[], r: FailRule) => string[])(stacks, rule),
  );
}

/**
 * A number as plan documents and reports carry it: at most 3 decimals ({@link round3}), so a raw estimate such as
 * 11.570047502628572 s reads 11.57.
 */
export const numberText = (n: number) => String(round3(n));

/** A planned value in words: strings as they are, numbers (also inside lists and objects) at {@link numberText}. */
const show = (v: unknown) =>
  v === undefined
    ? "(none)"
    : typeof v === "string"
      ? v
      : typeof v === "number"
        ? numberText(v)
        : JSON.stringify(v, (_k, x: unknown) => (typeof x === "number" ? round3(x) : x));
export const describe = (ch: ValueChange | InputChange) =>
  `${"key" in ch ? ch.key : ch.path}: ${show(ch.before)} → ${show(ch.after)}`;

/** The lines of one re-planned workload: a headline, then each changed value with its reason. */
export function workloadLines(c: WorkloadChange): string[] {
  const stops = ` STOPS FITTING IN ${noFitWhere(c.doesNotFitIn.after).toUpperCase()} (${noFitDetail(c.doesNotFitIn.after)});`;
  const flip = c.fitsBefore !== c.fitsAfter ? (c.fitsAfter ? " NOW FITS" : stops) : "";
  return [
    `${c.name}:${flip} headroom ${numberText(c.headroomGiB.before)} → ${numberText(c.headroomGiB.after)} GiB per GPU; ` +
      `${usd(c.usdPerHour.after - c.usdPerHour.before)}/h (${c.usdPerHour.before.toFixed(2)} → ${c.usdPerHour.after.toFixed(2)}); ` +
      `per run ${runText(c.perRun.before)} → ${runText(c.perRun.after)}`,
    ...c.changes.map((ch) => `  ${describe(ch)}${ch.reason ? ` (${ch.reason})` : ""}`),
  ];
}

/** The headline of one changed resource: status, name, and what a replacement or deletion loses. */
export function resourceHeadline(c: ResourceChange): string {
  const loud = statefulLosses([c]).length > 0;
  const kept = c.status === "removed" && c.protection?.includes("retainOnDelete");
  const guard = c.protection?.includes("protect") && c.status !== "updated" && c.status !== "added";
  return (
    `${loud ? c.status.toUpperCase() : c.status} ${resourceName(c)}` +
    (c.replacedBecause ? ` (because ${c.replacedBecause.join("; ")})` : "") +
    (c.replacedParts ? ` (replaces ${c.replacedParts})` : "") +
    (loud ? `: loses ${c.loses}` : "") +
    (kept ? ": stays in the cloud (retainOnDelete), no longer managed by the stack" : "") +
    (guard ? "; it is protected, so pulumi up stops with an error until the protection is lifted" : "")
  );
}

/** The lines of one changed resource: the headline, then each changed input. */
export function resourceLines(c: ResourceChange): string[] {
  return [resourceHeadline(c), ...c.inputs.map((i) => `  ${describe(i)}`)];
}

/**
 * What follows a new workload's name: its forecast run ("(per run 1 h 05 min, $5.70)"), then ": DOES NOT FIT IN HOST
 * MEMORY (…)" when it does not fit.
 */
export function addedNoFit(diff: StackDiff, name: string): string {
  const fits = diff.stopsFittingIn[name];
  const run = ` (per run ${runText(diff.addedPerRun[name] ?? null)})`;
  return run + (fits ? `: DOES NOT FIT IN ${noFitWhere(fits).toUpperCase()} (${noFitDetail(fits)})` : "");
}

function stackText({ stack, diff, resources, notPreviewed }: StackReport): string[] {
  const out = [`Stack ${stack}:`];
  for (const n of diff.added) out.push(`  added workload ${n}${addedNoFit(diff, n)}`);
  for (const n of diff.removed) out.push(`  removed workload ${n}`);
  for (const c of diff.changed) out.push(...workloadLines(c).map((l) => `  ${l}`));
  for (const p of diff.pools)
    out.push(
      `  pool ${p.name} ${p.status}: ${p.changes.map(describe).join(", ")}; ` +
        `$/h at max ${p.usdPerHourAtMax.before.toFixed(2)} → ${p.usdPerHourAtMax.after.toFixed(2)}` +
        (p.capacityNote ? ` (${p.capacityNote})` : ""),
    );
  if (!diff.added.length && !diff.removed.length && !diff.changed.length && !diff.pools.length)
    out.push("  no planned change");
  if (resources === null) out.push(`  platform resources: not previewed (${notPreviewed ?? "--no-preview"})`);
  else if (resources.length === 0) out.push("  platform resources: no change");
  else for (const c of resources) out.push(...resourceLines(c).map((l) => `  ${l}`));
  return [...out, ""];
}

/** The text view: the summary, then per stack its workloads, pools and platform resources. */
export function diffText(stacks: readonly StackReport[]): string {
  return [summaryLine(stacks), "", ...stacks.flatMap(stackText)].join("\n");
}

/** The JSON view: stable key order. */
export function diffJson(stacks: readonly StackReport[], fired: readonly string[]): string {
  return stableJson({ summary: summaryLine(stacks), fired, stacks });
}
