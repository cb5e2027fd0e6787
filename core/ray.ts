/**
 * The Ray version pulumi-ray-gpu renders for and tests against, and the check that keeps official Ray images on
 * it. The runtime library, the example entrypoints and `npm run test:ray` all run on this version
 * (`runtime/requirements.txt` pins it; a test checks they agree).
 */

import { OPTIONAL_REGISTRY_HOST } from "./config/image-reference";

/** Ray version of every RayJob's `rayVersion`, and of the images we accept from the Ray project. */
export const RAY_VERSION = "2.58.0";
/** Image the examples and stacks use: Ray's own GPU image (CUDA, Python 3.11). */
export const RAY_IMAGE = `rayproject/ray:${RAY_VERSION}-py311-gpu`;

/**
 * A Ray project image, from Docker Hub or any registry that mirrors it (`docker.io/`, `registry-1.docker.io/`,
 * `123456789012.dkr.ecr.us-east-1.amazonaws.com/`, `localhost:5000/`: a first path part with a `.` or `:`, or
 * `localhost`, is a registry host, as Docker reads references).
 */
const OFFICIAL = new RegExp(
  `^${OPTIONAL_REGISTRY_HOST}(?:rayproject|anyscale)/(ray|ray-ml|ray-llm)(?::([^@]+))?(?:@.*)?$`,
);

/**
 * The repository and tag of a Ray project image, or undefined for what cannot be read: your own images (trusted to be
 * built `FROM` a matching Ray image) and a digest without a tag. An image without either reads as tag `latest`.
 */
function officialRayImage(image: string): { readonly repository: string; readonly tag: string } | undefined {
  const match = OFFICIAL.exec(image);
  if (!match || (match[2] === undefined && image.includes("@"))) return undefined;
  return { repository: match[1]!, tag: match[2] ?? "latest" };
}

/**
 * Why an image cannot run our RayJobs, or undefined. Only the Ray project's images can be checked: their tag
 * names the Ray version (`2.58.0-py311-gpu`); a tag without it (`latest`, `nightly`) could be any version.
 */
export function rayImageProblem(image: string): string | undefined {
  const tag = officialRayImage(image)?.tag;
  if (tag === undefined || tag === RAY_VERSION || tag.startsWith(`${RAY_VERSION}-`)) return undefined;
  return (
    `Ray images must be Ray ${RAY_VERSION}, the version the RayJob declares and the runtime library ` +
    `is tested with (tag "${tag}"): use ${RAY_IMAGE}, or your own image built from it`
  );
}

/**
 * Why a Ray project image cannot run a GPU workload, or undefined: its tag names no CUDA build. Ray's images are CPU-only
 * unless the tag says `-gpu` or `-cu<version>` (`2.58.0-py311-gpu`, `2.58.0-py311-cu128`); `ray-llm` images are always
 * CUDA builds. A CPU image schedules onto the GPU nodes and fails at the first CUDA call.
 */
export function rayImageGpuProblem(image: string): string | undefined {
  const official = officialRayImage(image);
  if (!official || official.repository === "ray-llm" || /-(gpu|cu\d+)(-|$)/.test(official.tag)) return undefined;
  return (
    `is a CPU-only Ray image (tag "${official.tag}" names no CUDA build): every workload runs on A10G GPUs and would ` +
    `fail at its first CUDA call; use ${RAY_IMAGE}, a -cu<version> tag, or your own image built from one`
  );
}

/**
 * Why an image cannot run a job whose workers cross nodes over EFA, or undefined. The Ray project's images carry no
 * libfabric and no aws-ofi-nccl (ray-project/ray `docker/base-deps/Dockerfile`), so NCCL could not use EFA; your own
 * images cannot be read here, and NCCL refuses to start without the plugin (`NCCL_NET`, ./cluster/env.ts).
 */
export function rayImageEfaProblem(image: string): string | undefined {
  if (!officialRayImage(image)) return undefined;
  return (
    "is a Ray project image, which has no libfabric and no aws-ofi-nccl, and the job's workers cross nodes over EFA: " +
    "build your image from it with the EFA software (images/train/Dockerfile does: efa_installer.sh --skip-kmod " +
    "--skip-limit-conf --no-verify), or run the job on a pool with efa: false"
  );
}
