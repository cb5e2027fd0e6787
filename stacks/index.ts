/**
 * The Pulumi program (`pulumi up` runs this). The only place that reads Pulumi config: every `ray-gpu:` key is
 * validated with the schema the CLI uses, then handed down as typed values.
 */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { namespaceKeys, parseStackConfig } from "../core/config/stack";
import { ConfigError } from "../core/errors";
import { planStack } from "../workloads/stack";
import { pulumiConfigSecrets, SECRETS_NAMESPACE } from "../workloads/security/secrets";
import { loadRuntimePackage } from "../io/runtime-package";
import { RayWorkload } from "../components/ray-workload";
import { RayGpuPlatform } from "../components/platform";

/** All `ray-gpu:` keys of the stack, namespace stripped; unknown keys are kept so the schema can reject them. */
function readRayGpuConfig(): Record<string, unknown> {
  // Pulumi hands structured values over as JSON text and plain values as strings.
  const parse = (value: string): unknown => {
    try {
      return /^[[{]/.test(value.trim()) ? JSON.parse(value) : value;
    } catch {
      return value;
    }
  };
  const raw = namespaceKeys(pulumi.runtime.allConfig()) as Record<string, string>;
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, parse(v)]));
}

/**
 * Values of a workload's `secretEnv` entries that name Pulumi config keys, read as secrets (`pulumi config set
 * --secret ray-gpu-secrets:hfToken ...`). A key may carry its own namespace (`team:hfToken`); without one it is
 * `ray-gpu-secrets` (the `ray-gpu` namespace holds only validated settings).
 */
function secretValues(workload: string): Record<string, pulumi.Output<string>> {
  const spec = config.workloads.find((w) => w.name === workload)!;
  return Object.fromEntries(
    Object.entries(pulumiConfigSecrets(spec.secretEnv)).map(([name, key]) => {
      const [namespace, bare] = key.includes(":") ? key.split(":", 2) : [SECRETS_NAMESPACE, key];
      return [name, new pulumi.Config(namespace).requireSecret(bare!)];
    }),
  );
}

/** Runs `fn`; input problems become a RunError, which Pulumi prints (every problem, with paths) without a stack trace. */
function orRunError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ConfigError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

const config = orRunError(() => parseStackConfig(readRayGpuConfig(), `Pulumi.${pulumi.getStack()}.yaml`));
const runtime = loadRuntimePackage();
const plan = orRunError(() => planStack(config, { runtime, requireRender: true }));

// One explicit AWS provider for the region the config names; nothing reads `aws:region`.
const awsProvider = new aws.Provider("aws", { region: config.region as aws.Region });
const platform = new RayGpuPlatform("ray-gpu", { config, runtime }, { providers: [awsProvider] });
// Example workloads (placeholder data) are planned and rendered by the CLI but never submitted.
const workloads = plan.objects
  .filter((o) => !o.example)
  .map(
    ({ workload, objects }) =>
      new RayWorkload(workload, { objects, secrets: secretValues(workload) }, platform.workloadOptions()),
  );

/** Kubeconfig of the cluster (`pulumi stack output kubeconfig --show-secrets > kubeconfig`); it holds no credential. */
export const kubeconfig = platform.kubeconfig;
/** Name of the EKS cluster. */
export const clusterName = platform.clusterName;
/** Namespace the RayJobs run in. */
export const workloadNamespace = platform.workloadNamespace;
/** The bucket for datasets, checkpoints and results. */
export const bucketName = platform.bucketName;
/** IAM role the Ray pods assume (Pod Identity), allowed to use only the bucket. */
export const podRoleArn = platform.podRoleArn;
/** RayJob names, in config order. */
export const rayJobs = pulumi.all(workloads.map((w) => w.rayJobName));
/** Workloads marked `example: true`: planned and checked, not submitted. Drop the flag once a job's image and data are yours. */
export const examplesNotSubmitted = plan.objects.filter((o) => o.example).map((o) => o.workload);
/** The environment the stack was planned for. */
export const environment = config.environment;
