/** `ray-gpu tune`'s report in words: the bound and its numbers, then the re-plan as a diff with each reason. */
import { durationText } from "../../core/forecast/job";
import type { TuneResult } from "./result";

/** How `tune` was invoked: what the command that applies its proposal must repeat to run as printed. */
export interface TuneInvocation {
  /** The `-C` folder, as given. @default - none given: the command runs from the same folder */
  readonly dir?: string;
  readonly stack: string;
  /** The run record's path, as given (relative to the folder the command runs from, like `-C`). */
  readonly from: string;
  /** @default - none given: the record's workload */
  readonly workload?: string;
}

/**
 * `word` as a POSIX shell reads it back: bare when it holds only characters no shell treats specially, otherwise in
 * single quotes, each `'` written `'\''` (POSIX Shell Command Language, 2.2.2 Single-Quotes: inside them nothing is
 * special, and no single quote can occur).
 */
export function shellWord(word: string): string {
  return /^[\w@%+:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The command that applies the proposal: the invocation's own folder, stack, record and workload, with `--write`. */
export function applyCommand(inv: TuneInvocation): string {
  const args = [
    ...(inv.dir === undefined ? [] : ["-C", inv.dir]),
    "tune",
    "--stack",
    inv.stack,
    "--from",
    inv.from,
    ...(inv.workload === undefined ? [] : ["--workload", inv.workload]),
    "--write",
  ];
  return `ray-gpu ${args.map(shellWord).join(" ")}`;
}

const STAGE_NAMES = {
  objectStore: "the object store (blocks spilled to disk)",
  gpuMemory: "GPU memory headroom",
  preprocess: "preprocessing (the CPU tasks that tokenize)",
  read: "reading the input",
  dataLoader: "the DataLoader (the training loop waits for data)",
  gpu: "the GPU stage",
  none: "no stage",
} as const;

function changeLines(r: TuneResult, inv: TuneInvocation): string[] {
  const what = r.diagnosis.healthy ? "taking back ray-gpu tune's own earlier pins, which this run shows unneeded" : "";
  const lines = ["", `Re-plan of ${r.entry} (${r.workload})${what ? `, ${what}` : ""}:`];
  for (const c of r.diagnosis.changes)
    lines.push(`  ${c.field}: ${c.to === undefined ? "the plan's own value" : c.to} (${c.reason})`);
  if (r.expected.length > 0) lines.push("  expected, as the plan now computes it:");
  for (const e of r.expected) lines.push(`    ${e.key}: ${e.before} -> ${e.after}`);
  lines.push("", ...r.diff.map((l) => `  ${l}`), "");
  lines.push(
    r.written
      ? `Wrote the change to ${r.file}: run the job again and tune its new record.`
      : `Apply it with: ${applyCommand(inv)}`,
  );
  return lines;
}

/** The forecast at the measured pace, in words. */
function forecastLines(r: TuneResult): string[] {
  const f = r.forecast;
  if (!f) return [];
  const run = (x: { wallSeconds: number; costUsd: number }) =>
    `${durationText(x.wallSeconds)}, $${x.costUsd.toFixed(2)}`;
  return [
    "",
    `Forecast at the measured pace: ${f.measured} ${f.unit} against the ${f.planned} forecast (${f.ratio}x): a run of ` +
      `the plan's work takes ${run(f.recalibrated)} (forecast ${run(f.forecast)}).`,
  ];
}

/** The report; its last line, when a change is proposed and not written, the command that writes it. */
export function tuneText(r: TuneResult, inv: TuneInvocation): string {
  const d = r.diagnosis;
  const head = `${r.workload} (${r.kind}), run recorded ${r.recordedAt}`;
  const bound = !d.healthy
    ? `Bound by ${STAGE_NAMES[d.stage]}.`
    : d.stage === "none"
      ? "Healthy: no stage bound the run."
      : `Healthy: ${STAGE_NAMES[d.stage]} bounds the job, at the plan's own settings.`;
  const lines = [head, "", bound, ...d.evidence.map((e) => `  ${e}`), ...forecastLines(r)];
  if (d.changes.length > 0) lines.push(...changeLines(r, inv));
  else lines.push("", d.note ? `No change proposed: ${d.note}.` : "No change proposed.");
  return `${lines.join("\n")}\n`;
}
