/** The prod stack with its training pool on `spot-with-fallback`: as a parsed config, and as a Pulumi config edit. */
import { parseStackConfig, type StackConfig } from "../../core/config/stack";
import { repoStack } from "./fixtures";

/** The prod pool the tests turn into a spot-with-fallback pool. */
export const FALLBACK_POOL = "train-a10g-4x";

/** `platform` with {@link FALLBACK_POOL} on spot-with-fallback (and `spotWaitMinutes` when given). */
function withFallback<P extends { gpuNodeGroups: readonly { name: string }[] }>(platform: P, wait?: number): P {
  const gpuNodeGroups = platform.gpuNodeGroups.map((g) =>
    g.name === FALLBACK_POOL
      ? { ...g, capacityType: "spot-with-fallback", ...(wait === undefined ? {} : { spotWaitMinutes: wait }) }
      : g,
  );
  return { ...platform, gpuNodeGroups };
}

/** The prod stack, validated again after the change (so the prod rules apply to it). */
export function prodWithFallback(wait?: number): StackConfig {
  const prod = repoStack("prod");
  return parseStackConfig({ ...prod, platform: withFallback(prod.platform, wait) });
}

/** For `runProgram("prod", …)`: the same change on the Pulumi config map. */
export function fallbackConfigEdit(config: Record<string, string>): void {
  const platform = JSON.parse(config["ray-gpu:platform"]!) as { gpuNodeGroups: { name: string }[] };
  config["ray-gpu:platform"] = JSON.stringify(withFallback(platform));
}
