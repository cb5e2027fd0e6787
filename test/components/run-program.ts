/** Runs stacks/index.ts once under the preview mocks with a stack's config (one program per test file). */
import { join } from "node:path";
import type { DeployNode } from "../../core/deploy/order";
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

/**
 * What the cloud answers to data-source calls, by token (`aws:eks/getCluster:getCluster`): fields merged over the
 * preview mocks' placeholders, which echo the inputs and so lack what only the cloud knows (a cluster's ARN).
 */
export type CloudAnswers = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** Makes the installed mocks answer calls with `answers` (the mock monitor keeps its mocks in `mocks`). */
function answerCalls(answers: CloudAnswers): void {
  type Call = (args: { token: string }) => Record<string, unknown> | Promise<Record<string, unknown>>;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- internal module of the pinned @pulumi/pulumi
  const settings = require("@pulumi/pulumi/runtime/settings") as { getMonitor(): { mocks: { call: Call } } };
  const mocks = settings.getMonitor().mocks;
  const call = mocks.call.bind(mocks);
  mocks.call = async (args) => ({ ...(await call(args)), ...answers[args.token] });
}

/**
 * Runs the program for `stack`, its example workloads submitted, after `edit` changes the config; its data-source calls
 * get `answers` over the placeholders.
 */
export async function runProgram(
  stack: "dev" | "prod",
  edit: (config: Record<string, string>) => void = () => {},
  answers: CloudAnswers = {},
): Promise<RecordedResource[]> {
  const config = stackFileConfig(join(repoRoot, `Pulumi.${stack}.yaml`));
  submitExamples(config);
  edit(config);
  const recorded = await setupPulumiMocks(config, stack);
  answerCalls(answers);
  await import("../../stacks/index.js");
  await settlePreview();
  return recorded;
}

export const ofType = (rs: readonly RecordedResource[], type: string) => rs.filter((r) => r.type === type);

const urnName = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

/** The recorded resources as the deploy simulation's graph (parents and dependencies by name). */
export const deployNodesOf = (rs: readonly RecordedResource[]): DeployNode[] =>
  rs.map((r) => ({
    type: r.type,
    name: r.name,
    parent: r.parent ? urnName(r.parent) : null,
    inputs: r.inputs,
    dependsOn: r.dependencies.map(urnName),
  }));
