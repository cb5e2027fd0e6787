/** Shared test inputs: the repo's real stacks and a small valid config to mutate. */
import { resolve } from "node:path";
import { parseStackConfig, type StackConfig } from "../../core/config/stack";
import { loadStackConfig } from "../../cli/stack-file";
import { loadRuntimePackage } from "../../io/runtime-package";

/** The repository's runtime package, read once per test file (what every RayJob mounts). */
export const runtime = loadRuntimePackage();

export const repoRoot = resolve(__dirname, "../..");

/** The repo's `Pulumi.<name>.yaml`, validated. */
export function repoStack(name: "dev" | "prod"): StackConfig {
  return loadStackConfig(repoRoot, name).config;
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
      cluster: { mode: "create", name: "test" },
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
