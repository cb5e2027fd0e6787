/** Shared test inputs: the repo's real stacks and a small valid config to mutate. */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseStackConfig, type StackConfig } from "../../core/config/stack";
import { ConfigError } from "../../core/errors";
import { namespacePolicies } from "../../workloads/security/namespace";
import { loadStackConfig } from "../../cli/input/stack-file";
import { loadRuntimePackage } from "../../io/runtime-package";

/** The repository's runtime package, read once per test file (what every RayJob mounts). */
export const runtime = loadRuntimePackage();

export const repoRoot = resolve(__dirname, "../..");

/** The repo's `Pulumi.<name>.yaml`, validated; `queueing: false` turns Kueue off (prod then keeps deletionRules). */
export function repoStack(name: "dev" | "prod", options: { queueing?: boolean } = {}): StackConfig {
  const config = loadStackConfig(repoRoot, name).config;
  if (options.queueing !== false) return config;
  return { ...config, platform: { ...config.platform, queueing: { enabled: false } } };
}

/** Raw (unvalidated) stack config, loosely typed so tests can break it on purpose. */
export interface RawConfig {
  environment: string;
  region?: string;
  platform: { cluster: Record<string, unknown>; gpuNodeGroups: Record<string, unknown>[]; [key: string]: unknown };
  workloads: Record<string, unknown>[];
  [key: string]: unknown;
}

/** A minimal valid stack config (namespace stripped), fresh on every call so tests can mutate it. */
export function minimalConfig(): RawConfig {
  return {
    environment: "dev",
    region: "us-east-1",
    platform: {
      cluster: { mode: "create", name: "test", publicAccessCidrs: ["44.192.0.0/24"] },
      gpuNodeGroups: [{ name: "a10g-4x", instanceType: "g5.12xlarge", maxNodes: 4 }],
    },
    workloads: [
      {
        kind: "TrainingJob",
        name: "train",
        model: "meta-llama/Llama-3.2-1B",
        image: "example/train:1",
        entrypoint: "python train.py",
        gpus: 8,
      },
    ],
  };
}

/** Parses {@link minimalConfig} after `mutate`. */
export function configWith(mutate: (c: RawConfig) => void): StackConfig {
  const c = minimalConfig();
  mutate(c);
  return parseStackConfig(c);
}

/** The message of the ConfigError that `raw` raises (as read from `Pulumi.test.yaml`); throws if it is valid. */
export function configProblems(raw: unknown): string {
  try {
    parseStackConfig(raw, "Pulumi.test.yaml");
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

/** File names `ray-gpu render` gives the namespace's NetworkPolicies. */
export const NETWORK_POLICY_FILES = namespacePolicies("ns", { httpsCidrs: [] }, {}).map(
  (p) => `networkpolicy-${p.metadata.name}.yaml`,
);

/** Files of the queue's objects for the repo stacks (namespace ray-jobs): a flavor per pool, the queues. */
export const queueFiles = (pools: readonly string[]) => [
  ...pools.map((p) => `resourceflavor-ray-jobs.${p}.yaml`),
  "clusterqueue-ray-jobs.ray-gpu.yaml",
  "localqueue-ray-gpu.yaml",
];

/** The files `render` writes for one workload (its alerts when the stack has observability, as the repo stacks do). */
export const workloadFiles = (n: string) => [
  `rayjob-${n}.yaml`,
  `configmap-${n}-tuning.yaml`,
  `poddisruptionbudget-${n}.yaml`,
  `networkpolicy-${n}-ray-peers.yaml`,
  `prometheusrule-${n}-alerts.yaml`,
];

/** Files of the namespace's monitoring objects (namespace ray-jobs): the Ray PodMonitor, the stack's rules, the dashboard. */
export const MONITORING_FILES = [
  "podmonitor-ray-gpu.yaml",
  "prometheusrule-ray-gpu.yaml",
  "configmap-ray-gpu-dashboard-ray-jobs.yaml",
];

/** Folders {@link filesUnder} does not enter: build output, installed packages, caches and virtual environments. */
const NOT_SOURCES = /^(node_modules|dist|__pycache__|\.mypy_cache|\.ruff_cache|\.pytest_cache|\.venv.*)$/;

/** Every file under `dir` (paths joined to `dir`) whose name matches `name`, outside {@link NOT_SOURCES} folders. */
export function filesUnder(dir: string, name: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return NOT_SOURCES.test(entry.name) ? [] : filesUnder(full, name);
    return entry.isFile() && name.test(entry.name) ? [full] : [];
  });
}
