/**
 * The words of `ray-gpu diff`: a summary line a PR title could carry, the `--fail-on` rules, and the text, Markdown (a
 * PR comment: one collapsible section per workload, under GitHub's comment limit) and JSON views.
 */
import { stableJson } from "../../core/serialize";
import type { StackDiff, ValueChange, WorkloadChange } from "./compare";

/**
 * Longest Markdown this writes. GitHub refuses comment bodies over 65,536 characters ("Body is too long (maximum is
 * 65536 characters)"), and counts in a way that is not JavaScript's `.length` (its storage limit is in 4-byte
 * characters), so stay at 60,000, as changesets/action does (pulumi/actions uses 64,000).
 */
export const COMMENT_LIMIT = 60_000;

/** A `--fail-on` rule: `no-fit`, `prod-lifecycle` or `cost:<usd-per-hour>`. */
export type FailRule = { kind: "no-fit" } | { kind: "prod-lifecycle" } | { kind: "cost"; usdPerHour: number };

const signed = (n: number, digits = 0) => `${n >= 0 ? "+" : "-"}${Math.abs(n).toFixed(digits)}`;
const usd = (n: number) => `${n >= 0 ? "+" : "-"}$${Math.abs(n).toFixed(2)}`;

/** "+8 GPUs, +$40.96/h at max, 1 workload re-planned, 1 added, 0 removed, 1 stops fitting". */
export function summaryLine(diffs: readonly StackDiff[]): string {
  const total = (f: (d: StackDiff) => number) => diffs.reduce((n, d) => n + f(d), 0);
  const gpus = total((d) => d.gpus.after - d.gpus.before);
  const cost = total((d) => d.usdPerHourAtMax.after - d.usdPerHourAtMax.before);
  const replanned = total((d) => d.changed.length);
  const stops = total((d) => d.stopsFitting.length);
  return (
    `${signed(gpus)} GPUs, ${usd(cost)}/h at max, ${replanned} workload${replanned === 1 ? "" : "s"} re-planned, ` +
    `${total((d) => d.added.length)} added, ${total((d) => d.removed.length)} removed, ` +
    `${stops} stop${stops === 1 ? "s" : ""} fitting`
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

/** Each rule that fires, with why; empty when none does. */
export function firedRules(diffs: readonly StackDiff[], rules: readonly FailRule[]): string[] {
  return rules.flatMap((rule): string[] => {
    if (rule.kind === "no-fit")
      return diffs.flatMap((d) => d.stopsFitting.map((w) => `no-fit: ${w} does not fit in GPU memory`));
    if (rule.kind === "prod-lifecycle")
      return diffs
        .filter((d) => d.environment === "prod")
        .flatMap((d) =>
          d.changed.flatMap((c) => lifecycleLosses(c).map((ch) => `prod-lifecycle: ${c.name} ${describe(ch)}`)),
        );
    const delta = diffs.reduce((n, d) => n + d.usdPerHourAtMax.after - d.usdPerHourAtMax.before, 0);
    return delta > rule.usdPerHour ? [`cost: ${usd(delta)}/h at max exceeds +$${rule.usdPerHour.toFixed(2)}/h`] : [];
  });
}

const show = (v: unknown) => (v === undefined ? "(none)" : typeof v === "string" ? v : JSON.stringify(v));
const describe = (ch: ValueChange) => `${ch.key}: ${show(ch.before)} → ${show(ch.after)}`;

/** The lines of one re-planned workload. */
function workloadLines(c: WorkloadChange): string[] {
  const flip = c.fitsBefore !== c.fitsAfter ? (c.fitsAfter ? " NOW FITS" : " STOPS FITTING IN GPU MEMORY") : "";
  return [
    `${c.name}:${flip} headroom ${c.headroomGiB.before} → ${c.headroomGiB.after} GiB per GPU; ` +
      `${usd(c.usdPerHour.after - c.usdPerHour.before)}/h (${c.usdPerHour.before.toFixed(2)} → ${c.usdPerHour.after.toFixed(2)})`,
    ...c.changes.map((ch) => `  ${describe(ch)}${ch.reason ? ` (${ch.reason})` : ""}`),
  ];
}

/** The text view: per stack, workloads and pools, then the summary. */
export function diffText(stacks: readonly { stack: string; diff: StackDiff }[]): string {
  const out: string[] = [summaryLine(stacks.map((s) => s.diff)), ""];
  for (const { stack, diff } of stacks) {
    out.push(`Stack ${stack}:`);
    for (const n of diff.added) out.push(`  added workload ${n}`);
    for (const n of diff.removed) out.push(`  removed workload ${n}`);
    for (const c of diff.changed) out.push(...workloadLines(c).map((l) => `  ${l}`));
    for (const p of diff.pools)
      out.push(
        `  pool ${p.name} ${p.status}: ${p.changes.map(describe).join(", ")}; ` +
          `$/h at max ${p.usdPerHourAtMax.before.toFixed(2)} → ${p.usdPerHourAtMax.after.toFixed(2)}`,
      );
    if (!diff.added.length && !diff.removed.length && !diff.changed.length && !diff.pools.length)
      out.push("  no planned change");
    out.push("");
  }
  return out.join("\n");
}

/** The Markdown view for a PR comment; cut (with a note) to stay under {@link COMMENT_LIMIT}. */
export function diffMarkdown(stacks: readonly { stack: string; diff: StackDiff }[], fired: readonly string[]): string {
  const head = [`**${summaryLine(stacks.map((s) => s.diff))}**`, ...fired.map((f) => `- :x: ${f}`), ""];
  const sections = stacks.flatMap(({ stack, diff }) => [
    `### Stack \`${stack}\``,
    ...diff.added.map((n) => `- added workload \`${n}\``),
    ...diff.removed.map((n) => `- removed workload \`${n}\``),
    ...diff.changed.map((c) => {
      const [first, ...rest] = workloadLines(c);
      return `<details><summary>${first}</summary>\n\n\`\`\`\n${rest.join("\n")}\n\`\`\`\n</details>`;
    }),
    ...diff.pools.map((p) => `- pool \`${p.name}\` ${p.status}: ${p.changes.map(describe).join(", ")}`),
    "",
  ]);
  const note = "\n_(cut to fit GitHub's comment limit: run `ray-gpu diff` for the rest)_\n";
  const full = [...head, ...sections].join("\n");
  if (full.length <= COMMENT_LIMIT) return full;
  let text = head.join("\n");
  for (const s of sections) {
    if (text.length + s.length + 1 + note.length > COMMENT_LIMIT) break;
    text += `\n${s}`;
  }
  return text + note;
}

/** The JSON view: stable key order. */
export function diffJson(stacks: readonly { stack: string; diff: StackDiff }[], fired: readonly string[]): string {
  return stableJson({ summary: summaryLine(stacks.map((s) => s.diff)), fired, stacks });
}
