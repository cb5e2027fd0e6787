/**
 * Rules on KubeRay's resources (RayJob, RayCluster, RayService): the served API version, Ray's token auth, no GPU on
 * the head, no plaintext secret in any field that reaches a pod (`./secret-fields.ts`), and pinned images. Pod and
 * container security is in `./pod-security.ts`. Pure.
 */
import { imageReferenceProblem } from "../core/config/image-reference";
import { obj, shown, violation, type PolicyInput, type ResourceRule } from "./inputs";
import { RAY_TYPE_LIST, rayClusterSpec, rayContainers, rayVersionOf } from "./ray-pods";
import { secretFindings } from "./secret-fields";

/** A KubeRay resource is `ray.io/v1`, the one version KubeRay v1.7 serves without deprecation. */
function apiVersionProblems(r: PolicyInput): string[] {
  const version = rayVersionOf(r.type);
  if (version === undefined || version === "v1") return [];
  const why =
    version === "v1alpha1"
      ? "deprecated in KubeRay v1.7, and its schema has no authOptions, so Ray's token auth cannot be turned on"
      : "a version KubeRay v1.7 does not serve (it serves v1, and the deprecated v1alpha1)";
  return [violation(r, "apiVersion", `is ray.io/${version}: ${why}`, "use apiVersion ray.io/v1")];
}

const GPU = "nvidia.com/gpu";
/** Whether a resource quantity of GPUs is more than none. */
const holdsGpu = (quantity: unknown) => quantity !== undefined && String(quantity) !== "0";

/** Ray's token auth is on for the cluster the resource creates. */
function authProblems(r: PolicyInput): string[] {
  const cluster = rayClusterSpec(r);
  const mode = obj(cluster?.value["authOptions"])["mode"];
  if (!cluster || mode === "token") return [];
  return [
    violation(
      r,
      `${cluster.path}.authOptions.mode`,
      `is ${shown(mode)}, not "token": anyone who reaches the head runs code`,
      'set authOptions: {mode: "token"}',
    ),
  ];
}

/** The head neither holds a GPU (limits or requests of any of its containers) nor advertises one to Ray. */
function headGpuProblems(r: PolicyInput): string[] {
  const cluster = rayClusterSpec(r);
  if (!cluster) return [];
  const held = rayContainers(r)
    .filter((c) => c.pod.role === "head")
    .flatMap((c) =>
      (["limits", "requests"] as const)
        .filter((k) => holdsGpu(obj(obj(c.value["resources"])[k])[GPU]))
        .map((k) =>
          violation(
            r,
            `${c.path}.resources.${k}["${GPU}"]`,
            "gives the head a GPU, so work lands on it",
            "remove it; GPUs belong to worker groups",
          ),
        ),
    );
  const params = obj(obj(cluster.value["headGroupSpec"])["rayStartParams"]);
  const advertised =
    params["num-gpus"] === "0"
      ? []
      : [
          violation(
            r,
            `${cluster.path}.headGroupSpec.rayStartParams.num-gpus`,
            `is ${shown(params["num-gpus"])}, not "0": Ray may place GPU work on the head`,
            'set it to "0"',
          ),
        ];
  return [...held, ...advertised];
}

/** No field that reaches a pod carries a secret in clear text. */
const plaintextSecretProblems = (r: PolicyInput) =>
  secretFindings(r).map(([path, problem, fix]) => violation(r, path, problem, fix));

/**
 * A tag that names one build, by a positive grammar: a version (an optional `v`, digits, then anything after a `.`,
 * `_` or `-`: `2.58.0-py311-gpu`, `v1.2`, `20261201`) or a commit (7 to 40 lowercase hex digits, optionally after
 * `sha-` or `git-`). Every other tag (`latest`, `latest-gpu`, `nightly-gpu`, `LATEST`, `main`) moves.
 */
const PINNED_TAG = /^(?:v?[0-9]+(?:[._-].*)?|(?:sha-|git-)?[0-9a-f]{7,40})$/;

/**
 * What is wrong with an image reference, or undefined when it is pinned: a reference the kubelet can read
 * (`core/config/image-reference.ts`) with a digest, or with a tag that names one build ({@link PINNED_TAG}).
 */
export function imageProblem(image: unknown): string | undefined {
  if (typeof image !== "string" || image === "") return "is not set";
  const grammar = imageReferenceProblem(image);
  if (grammar) return `${JSON.stringify(image.slice(0, 300))} is not an image reference the kubelet reads: ${grammar}`;
  if (image.includes("@")) return undefined;
  const name = image.slice(image.lastIndexOf("/") + 1);
  const tag = name.includes(":") ? name.slice(name.indexOf(":") + 1) : undefined;
  if (tag === undefined) return `${JSON.stringify(image)} has no tag, so it runs whatever "latest" is at pull time`;
  if (!PINNED_TAG.test(tag))
    return `${JSON.stringify(image)} uses the moving tag "${tag}", which names no version or commit`;
  return undefined;
}

/** Every container's image is pinned. */
function imageProblems(r: PolicyInput): string[] {
  return rayContainers(r).flatMap((c) => {
    const problem = imageProblem(c.value["image"]);
    return problem
      ? [violation(r, `${c.path}.image`, problem, "pin a version tag (rayproject/ray:2.58.0-py311-gpu) or a digest")]
      : [];
  });
}

/** The rules on KubeRay's resources themselves (pod security: `POD_SECURITY_RULES`). */
export const RAY_RULES: readonly ResourceRule[] = [
  {
    name: "ray-api-v1",
    description:
      "Every KubeRay resource is ray.io/v1 (v1alpha1 is deprecated and cannot turn on token auth); the other Ray " +
      "rules check every ray.io version all the same.",
    types: RAY_TYPE_LIST,
    check: apiVersionProblems,
  },
  {
    name: "ray-auth-token",
    description:
      "Every Ray cluster (RayJob, RayCluster, RayService) turns on Ray's token auth (authOptions.mode: token).",
    types: RAY_TYPE_LIST,
    check: authProblems,
  },
  {
    name: "ray-head-no-gpu",
    description: "A Ray head holds no GPU (limits or requests) and advertises none (rayStartParams num-gpus: 0).",
    types: RAY_TYPE_LIST,
    check: headGpuProblems,
  },
  {
    name: "no-plaintext-secret-env",
    description:
      "No field that reaches a Ray pod holds a secret in clear text: a container's env values, command and args, a " +
      "secret-named variable or envFrom read from a ConfigMap, a RayJob's entrypoint and runtimeEnvYAML, a " +
      "RayService's serveConfigV2.",
    types: RAY_TYPE_LIST,
    check: plaintextSecretProblems,
  },
  {
    name: "ray-image-pinned",
    description:
      "Every container of every Ray pod names its image by a digest or a tag that names one build (a version or a " +
      "commit), in a reference the kubelet reads (no :latest, :nightly-gpu or other moving tag, no bare name).",
    types: RAY_TYPE_LIST,
    check: imageProblems,
  },
];
