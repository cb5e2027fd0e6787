/**
 * The vLLM a BatchInference job runs, where the workload says which: a `vllm==<version>` in `runtimeEnv.pip`, or the
 * tag of vLLM's own image (`vllm/vllm-openai:v<version>`). An engine older than the one the serving plan models
 * (`VLLM_MODELLED_FROM`) is refused, with the way out; a job that pins none runs the version its image ships
 * (`images/vllm` pins the one the plan models).
 */
import type { BatchInferenceSpec } from "../../../core/config/workloads";
import { pipProject } from "../../../core/config/distinct";
import { OPTIONAL_REGISTRY_HOST } from "../../../core/config/image-reference";
import { pipVersion, versionBelow } from "../../../core/config/pip";
import type { IssueCollector } from "../../../core/errors";
import { VLLM_MODELLED_FROM } from "../../../core/memory/estimate-inference";

/**
 * vLLM's published image (`vllm/vllm-openai`, on Docker Hub or a registry that mirrors it) and its release tags
 * (`v0.6.3`, `v0.6.3.post1`), with an optional digest.
 */
const VLLM_IMAGE = new RegExp(`^${OPTIONAL_REGISTRY_HOST}vllm/vllm-openai:v?([0-9][0-9A-Za-z.+_-]*)(?:@.*)?$`);

/** Why the plan does not model vLLM `version`, or undefined when it does. */
export function vllmEngineProblem(version: string): string | undefined {
  if (!versionBelow(version, VLLM_MODELLED_FROM)) return undefined;
  const { major, minor } = VLLM_MODELLED_FROM;
  return (
    `vLLM ${version} is older than ${major}.${minor}, the engine the memory plan models (the V1 engine: chunked ` +
    `prefill always on, a profile of max_num_batched_tokens tokens that samples max_num_seqs requests, the CUDA ` +
    `context outside gpu_memory_utilization); older engines profile and count memory otherwise, so the plan's KV ` +
    `cache and concurrency would not be theirs: pin vllm ${major}.${minor}.0 or later (images/vllm ships the ` +
    `version the plan models)`
  );
}

/** Refuses a pinned vLLM (in `runtimeEnv.pip` or the image tag) that the serving plan does not model. */
export function checkVllmEngine(spec: BatchInferenceSpec, path: string, issues: IssueCollector): void {
  (spec.runtimeEnv?.pip ?? []).forEach((requirement, i) => {
    if (pipProject(requirement) !== "vllm") return;
    const problem = vllmEngineProblem(pipVersion(requirement));
    if (problem) issues.add(`${path}.runtimeEnv.pip[${i}]`, problem, requirement);
  });
  const tag = spec.image === undefined ? undefined : VLLM_IMAGE.exec(spec.image)?.[1];
  const problem = tag === undefined ? undefined : vllmEngineProblem(tag);
  if (problem) issues.add(`${path}.image`, problem, spec.image);
}
