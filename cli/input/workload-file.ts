/**
 * `ray-gpu plan --workload <file>`: one workload entry, YAML or JSON, with the schema of a `ray-gpu:workloads`
 * entry. Without `--stack` it is planned on a one-pool platform built from the workload itself.
 */
import { CPU_INSTANCE_TYPES, GPU_INSTANCES, type CpuInstanceType } from "../../core/catalog/instances";
import { nodeAllocatable } from "../../core/catalog/eks-allocatable";
import { defaultDaemonSetReserve } from "../../core/catalog/daemonsets";
import { headSize } from "../../core/cluster/head";
import { podBudget } from "../../core/pools";
import type { StackConfig, Environment } from "../../core/config/stack";
import type { WorkloadSpec } from "../../core/config/workloads";
import { ConfigError } from "../../core/errors";
import { CpuNodeGroupSchema, PlatformSchema } from "../../core/config/platform";
import { parseStackConfig } from "../../core/config/stack";
import { readInputFile } from "./file";
import { parsePulumiYamlText } from "./pulumi-yaml";
import { Workload } from "../../workloads/workload";

/** Default g5 size when neither the workload nor a stack names one. */
export const DEFAULT_WORKLOAD_INSTANCE_TYPE = "g5.12xlarge" as const;

/**
 * Reads and validates a workload file. Its problems name the file and, as a workload construct's do, the workload by
 * its kind and name (`TrainingJob "llama-ddp".gpus`): the construct validates it.
 */
export function loadWorkloadFile(file: string): WorkloadSpec {
  const raw = parsePulumiYamlText(readInputFile(file, "workload file"), file);
  try {
    return new Workload(raw as WorkloadSpec).spec;
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(e.issues, file);
    throw e;
  }
}

/** The CPU pool's default size: the platform schema's own `cpuNodeGroup.instanceType` default. */
const DEFAULT_CPU_INSTANCE_TYPE: CpuInstanceType = CpuNodeGroupSchema.parse({}).instanceType;

/**
 * CPU pool size for a standalone plan: the schema's default, or, when the Ray head of `workers` GPU nodes outgrows
 * it (the head grows with the node count: core/cluster/head.ts), the smallest m6i whose pod budget (allocatable
 * less the default DaemonSet reserve) holds the head. Past the largest, the default stays and the plan's own error
 * names the fix.
 */
export function standaloneCpuInstanceType(workers: number): CpuInstanceType {
  const need = headSize(workers);
  const reserve = defaultDaemonSetReserve("cpu");
  const fits = (t: CpuInstanceType) => {
    const budget = podBudget(nodeAllocatable(t), reserve);
    return budget.cpus >= need.cpus && budget.memoryGiB >= need.memoryGiB;
  };
  if (fits(DEFAULT_CPU_INSTANCE_TYPE)) return DEFAULT_CPU_INSTANCE_TYPE;
  return (
    CPU_INSTANCE_TYPES.filter((t) => t.startsWith("m6i.") && fits(t))
      .toSorted((a, b) => nodeAllocatable(a).cpuMillis - nodeAllocatable(b).cpuMillis)
      .at(0) ?? DEFAULT_CPU_INSTANCE_TYPE
  );
}

/** A stack config holding just `spec`, on GPU and CPU pools sized for it. */
export function standaloneStack(spec: WorkloadSpec, environment: Environment): StackConfig {
  const instanceType = spec.instanceType ?? DEFAULT_WORKLOAD_INSTANCE_TYPE;
  // A pool as large as the job needs, within the schema's limit (a larger job then gets the plan's own error).
  const nodes = Math.min(1000, Math.max(1, Math.ceil(spec.gpus / GPU_INSTANCES[instanceType].gpus)));
  const platform = PlatformSchema.parse({
    cluster: { mode: "create", name: "ray-gpu", publicEndpoint: false },
    cpuNodeGroup: { instanceType: standaloneCpuInstanceType(nodes) },
    gpuNodeGroups: [{ name: spec.nodePool ?? "gpu", instanceType, maxNodes: nodes }],
  });
  return parseStackConfig({ environment, region: "us-east-1", platform, workloads: [spec] });
}
