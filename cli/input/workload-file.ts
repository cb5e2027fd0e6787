/**
 * `ray-gpu plan --workload <file>`: one workload entry, YAML or JSON, with the schema of a `ray-gpu:workloads`
 * entry. Without `--stack` it is planned on a one-pool platform built from the workload itself.
 */
import { GPU_INSTANCES } from "../../core/catalog/instances";
import type { StackConfig, Environment } from "../../core/config/stack";
import { WorkloadSpecSchema, type WorkloadSpec } from "../../core/config/workloads";
import { joinPath, toConfigIssues } from "../../core/config/zod-issues";
import { ConfigError } from "../../core/errors";
import { PlatformSchema } from "../../core/config/platform";
import { parseStackConfig } from "../../core/config/stack";
import { readInputFile } from "./file";
import { parseYamlText } from "./yaml";

/** Default g5 size when neither the workload nor a stack names one. */
export const DEFAULT_WORKLOAD_INSTANCE_TYPE = "g5.12xlarge" as const;

/** Reads and validates a workload file. */
export function loadWorkloadFile(file: string): WorkloadSpec {
  const raw = parseYamlText(readInputFile(file, "workload file"), file);
  const result = WorkloadSpecSchema.safeParse(raw);
  if (!result.success)
    throw new ConfigError(
      toConfigIssues(result.error, WorkloadSpecSchema, raw, (p) => joinPath(p) || "(root)"),
      file,
    );
  return result.data;
}

/** A stack config holding just `spec`, on a pool sized for it. */
export function standaloneStack(spec: WorkloadSpec, environment: Environment): StackConfig {
  const instanceType = spec.instanceType ?? DEFAULT_WORKLOAD_INSTANCE_TYPE;
  // A pool as large as the job needs, within the schema's limit (a larger job then gets the plan's own error).
  const nodes = Math.min(1000, Math.max(1, Math.ceil(spec.gpus / GPU_INSTANCES[instanceType].gpus)));
  const platform = PlatformSchema.parse({
    cluster: { mode: "create", name: "ray-gpu", publicEndpoint: false },
    gpuNodeGroups: [{ name: spec.nodePool ?? "gpu", instanceType, maxNodes: nodes }],
  });
  return parseStackConfig({ environment, region: "us-east-1", platform, workloads: [spec] });
}
