/**
 * A workload file's problems name the file and, as a workload construct's do, the workload by its kind and name
 * (`TrainingJob "pretrain-1b".gpus`): the same label a construct gives, from the construct itself.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadWorkloadFile } from "../../../cli/input/workload-file";
import { ConfigError } from "../../../core/errors";
import { TrainingJob } from "../../../workloads/workload";
import { repoRoot } from "../../helpers/fixtures";

const EXAMPLE = readFileSync(join(repoRoot, "examples/workloads/training-pinned.yaml"), "utf8");

/** The example workload file with `edit` applied, written to a fresh folder. */
function workloadFile(edit: (text: string) => string): string {
  const file = join(mkdtempSync(join(tmpdir(), "ray-gpu-workload-file-")), "job.yaml");
  writeFileSync(file, edit(EXAMPLE));
  return file;
}

/** The ConfigError that loading `file` raises. */
function problems(file: string): ConfigError {
  try {
    loadWorkloadFile(file);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error(`${file} is valid`);
}

describe("loadWorkloadFile", () => {
  it("names the file, then the workload's kind and name, in every problem", () => {
    const file = workloadFile((t) => t.replace("gpus: 8", "gpus: -1\nmicroBatchSise: 2"));
    const e = problems(file);
    expect(e.message).toBe(
      `${file}: 2 problems\n` +
        '  ✖ TrainingJob "pretrain-1b".gpus: must be >= 1 (got -1)\n' +
        '  ✖ TrainingJob "pretrain-1b".microBatchSise: unknown key; did you mean "microBatchSize"? (got 2)',
    );
  });

  it("labels the workload as the construct does, so a file and a construct name it alike", () => {
    const spec = { kind: "TrainingJob", name: "pretrain-1b", model: "meta-llama/Llama-3.2-1B", gpus: -1 } as const;
    const file = workloadFile(() => JSON.stringify(spec));
    let construct: ConfigError | undefined;
    try {
      new TrainingJob(spec);
    } catch (e) {
      construct = e as ConfigError;
    }
    expect(problems(file).issues).toEqual(construct!.issues);
    expect(construct!.issues.map((i) => i.path)).toEqual(['TrainingJob "pretrain-1b".gpus']);
  });

  it("says `workload` for a file that is no object, and the kind alone while the name is missing", () => {
    expect(problems(workloadFile(() => "- 1\n")).issues.map((i) => i.path)).toEqual(["workload"]);
    const nameless = problems(workloadFile((t) => t.replace("name: pretrain-1b\n", "")));
    expect(nameless.issues.map((i) => i.path)).toEqual(["TrainingJob.name"]);
  });

  it("returns the spec with its defaults, as before", () => {
    const spec = loadWorkloadFile(join(repoRoot, "examples/workloads/training-pinned.yaml"));
    expect(spec).toMatchObject({ kind: "TrainingJob", name: "pretrain-1b", gpus: 8, example: false });
  });
});
