/** What `ray-gpu tune` does, loaded only when it runs. */
import { writeFileSync } from "node:fs";
import type { StackConfig } from "../../core/config/stack";
import { ConfigError, namingSource } from "../../core/errors";
import { stableJson } from "../../core/serialize";
import { diagnose } from "../../core/tune/diagnose";
import { recalibrateForecast } from "../../core/tune/forecast";
import { BOUND_SHARE, type Change } from "../../core/tune/model";
import { RunRecordSchema, type RunRecord } from "../../core/tune/run-record";
import { joinPath, toConfigIssues } from "../../core/config/zod-issues";
import { loadRuntimePackage } from "../../io/runtime-package";
import { planStack, type StackPlan } from "../../workloads/stack";
import type { WorkloadPlan } from "../../workloads/workload";
import { UsageError, type CommandContext } from "../io";
import { loadStackConfig, stackConfigFromText } from "../input/stack-file";
import { readInputFile } from "../input/file";
import { parseYamlText } from "../input/yaml";
import { settingsOf, TUNABLE_FIELDS, tuneFacts } from "./facts";
import { applyChanges, changeDiff, entryPath, tunePins, withoutFields } from "./stack-edit";
import { tuneText } from "./text";
import { expectedEffects } from "./effects";
import type { TuneResult } from "./result";

/** The options of `ray-gpu tune`. */
export interface TuneOptions {
  stack: string;
  from: string;
  workload?: string;
  write?: boolean;
  json?: boolean;
}

/** The run record at `path`, validated; every problem with its key path. */
export function readRunRecord(path: string): RunRecord {
  const raw = parseYamlText(readInputFile(path, "run record"), path);
  const parsed = RunRecordSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const label = (p: Parameters<typeof joinPath>[0]) => `${path}: ${joinPath(p) || "(root)"}`;
  throw new ConfigError(toConfigIssues(parsed.error, RunRecordSchema, raw, label), path);
}

/** Plans a validated stack config, naming the file in errors. */
function planConfig(config: StackConfig, file: string): StackPlan {
  return namingSource(file, () => planStack(config, { runtime: loadRuntimePackage() }));
}

/** Plans a stack file's text (validated like `plan` does), naming the file in errors. */
const planText = (text: string, file: string) => planConfig(stackConfigFromText(text, file), file);

/** The workload's plan and its digest; refused when it does not render (no run can then be of it). */
export function renderedPlan(plan: StackPlan, name: string, file: string): { workload: WorkloadPlan; digest: string } {
  const workload = plan.workloads.find((w) => w.name === name);
  if (!workload)
    throw new UsageError(
      `${file} has no workload ${name}; its workloads are ${plan.workloads.map((w) => w.name).join(", ")}`,
    );
  const notRendered = plan.notRendered.find((n) => n.workload === name);
  if (notRendered)
    throw new UsageError(`workload ${name} does not render, so no run can be of its plan: ${notRendered.reason}`);
  return { workload, digest: workload.planDigest };
}

/** Refuses a record of another workload, environment or plan, with the reason. */
function checkRecordMatches(record: RunRecord, workload: WorkloadPlan, digest: string, file: string): void {
  const r = record.workload;
  const problems: string[] = [];
  if (r.kind !== workload.kind)
    problems.push(`the record is of kind ${r.kind}, ${workload.name} is of kind ${workload.kind}`);
  if (r.environment !== workload.environment)
    problems.push(`the record is of a ${r.environment} run, ${file} plans ${workload.environment}`);
  if (problems.length === 0 && r.planDigest !== digest)
    problems.push(
      `the run's plan is ${r.planDigest.slice(0, 19)}, ${file} now plans ${workload.name} as ${digest.slice(0, 19)}: ` +
        `the stack changed since the run, so its numbers say nothing of the current plan; run the job again, then tune`,
    );
  if (problems.length > 0) throw new UsageError(`refusing to tune ${workload.name}: ${problems.join("; ")}`);
}

/** The changes applied to the stack text, re-planned: the new text and each planned value that changes. */
function replan(stack: { text: string; file: string }, before: WorkloadPlan, changes: readonly Change[]) {
  const { text, file } = stack;
  if (changes.length === 0) return { text, expected: [] };
  const next = applyChanges(text, file, before.name, changes);
  const after = planText(next, file).workloads.find((w) => w.name === before.name)!;
  return { text: next, expected: expectedEffects(before, after) };
}

/** The workload's forecast at the pace the run measured, or null where either has none. */
function recalibrated(record: RunRecord, workload: WorkloadPlan) {
  const f = workload.forecast.forecast;
  if (!f) return null;
  const knobs: object = workload.memory.knobs;
  const samplesPerStep = "globalBatchSize" in knobs ? (knobs.globalBatchSize as number) : undefined;
  return recalibrateForecast(record, f, samplesPerStep) ?? null;
}

/**
 * Diagnoses the run, proposes the re-plan, and with `--write` applies it to the stack file.
 * @param givenDir - the `-C` folder as the user gave it, which the printed command that applies the change repeats;
 *   undefined when `-C` was not given
 */
export function runTune(ctx: CommandContext, opts: TuneOptions, givenDir?: string): void {
  const record = readRunRecord(opts.from);
  const name = opts.workload ?? record.workload.name;
  const { config, file, text } = loadStackConfig(ctx.dir(), opts.stack);
  const { workload, digest } = renderedPlan(planConfig(config, file), name, file);
  if (record.workload.name !== name)
    throw new UsageError(`refusing to tune ${name}: the run record is of workload ${record.workload.name}`);
  checkRecordMatches(record, workload, digest, file);
  const set = settingsOf(config, name);
  const plain = planText(withoutFields(text, file, name, TUNABLE_FIELDS), file);
  const pins = tunePins(text, file, name, TUNABLE_FIELDS);
  const diagnosis = diagnose(
    record,
    tuneFacts(
      workload,
      plain.workloads.find((w) => w.name === name)!,
      set,
      pins,
    ),
  );
  const next = replan({ text, file }, workload, diagnosis.changes);
  const entry = entryPath(text, file, name);
  const written = opts.write === true && diagnosis.changes.length > 0;
  if (written) writeFileSync(file, next.text);
  const result: TuneResult = {
    workload: name,
    kind: workload.kind,
    stack: opts.stack,
    file,
    entry,
    recordedAt: record.recordedAt,
    diagnosis,
    boundShare: BOUND_SHARE,
    diff: diagnosis.changes.length > 0 ? changeDiff(file, entry, name, diagnosis.changes) : [],
    expected: next.expected,
    written,
    forecast: recalibrated(record, workload),
  };
  const invocation = { dir: givenDir, stack: opts.stack, from: opts.from, workload: opts.workload };
  ctx.io.out(opts.json ? stableJson(result) : tuneText(result, invocation));
}
