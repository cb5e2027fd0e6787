/** `ray-gpu tune`'s report in words: the bound and its numbers, then the re-plan as a diff with each reason. */
import type { TuneResult } from "./result";

const STAGE_NAMES = {
  objectStore: "the object store (blocks spilled to disk)",
  gpuMemory: "GPU memory headroom",
  preprocess: "preprocessing (the CPU tasks that tokenize)",
  read: "reading the input",
  dataLoader: "the DataLoader (the training loop waits for data)",
  gpu: "the GPU stage",
  none: "no stage",
} as const;

function changeLines(r: TuneResult): string[] {
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
      : `Apply it with: ray-gpu tune --stack ${r.stack} --from <record> --write`,
  );
  return lines;
}

/** The report. */
export function tuneText(r: TuneResult): string {
  const d = r.diagnosis;
  const head = `${r.workload} (${r.kind}), run recorded ${r.recordedAt}`;
  const bound = !d.healthy
    ? `Bound by ${STAGE_NAMES[d.stage]}.`
    : d.stage === "none"
      ? "Healthy: no stage bound the run."
      : `Healthy: ${STAGE_NAMES[d.stage]} bounds the job, at the plan's own settings.`;
  const lines = [head, "", bound, ...d.evidence.map((e) => `  ${e}`)];
  if (d.changes.length > 0) lines.push(...changeLines(r));
  else lines.push("", d.note ? `No change proposed: ${d.note}.` : "No change proposed.");
  return `${lines.join("\n")}\n`;
}
