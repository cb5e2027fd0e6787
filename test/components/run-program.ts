/** Runs stacks/index.ts once under the preview mocks with a stack's config (one program per test file). */
import { join } from "node:path";
import { repoRoot } from "../helpers/fixtures";
import { settlePreview, setupPulumiMocks, stackFileConfig, type RecordedResource } from "../helpers/pulumi-mocks";

/**
 * Drops the `example` flag of every workload, as a user does once a job's data is theirs, so the program submits
 * the stack's RayJobs and the tests can check them.
 */
export function submitExamples(config: Record<string, string>): void {
  const workloads = JSON.parse(config["ray-gpu:workloads"] ?? "[]") as Record<string, unknown>[];
  config["ray-gpu:workloads"] = JSON.stringify(workloads.map(({ example: _example, ...w }) => w));
}

/** Runs the program for `stack`, its example workloads submitted, after `edit` changes the config. */
export async function runProgram(
  stack: "dev" | "prod",
  edit: (config: Record<string, string>) => void = () => {},
): Promise<RecordedResource[]> {
  const config = stackFileConfig(join(repoRoot, `Pulumi.${stack}.yaml`));
  submitExamples(config);
  edit(config);
  const recorded = await setupPulumiMocks(config, stack);
  await import("../../stacks/index.js");
  await settlePreview();
  return recorded;
}

export const ofType = (rs: readonly RecordedResource[], type: string) => rs.filter((r) => r.type === type);
