/**
 * Renders a planned cluster shape as KubeRay's `RayClusterSpec`: the part a RayJob, a RayService and a RayCluster
 * share (KubeRay validates it once for all three: `ray-operator/controllers/ray/utils/validation.go`,
 * `ValidateRayClusterSpec`).
 */
import { SPILL_PATH } from "../../core/cluster/shape";
import { gibToBytesString } from "../../core/quantity";
import { RAY_VERSION } from "../../core/ray";
import type { RayClusterSpec } from "../k8s/types";
import { RAY_AUTH } from "../security/pods";
import type { RayClusterInput } from "./input";
import { podMetadata } from "./labels";
import { commonEnv, headPod, workerPod } from "./pods";
import { noticeParts } from "./preemption";

/** The cluster: Ray's token authentication on, a head that runs no work, and one fixed-size worker group. */
export function renderRayClusterSpec(input: RayClusterInput, labels: Readonly<Record<string, string>>): RayClusterSpec {
  const { head, worker } = input.shape;
  const env = commonEnv(input);
  return {
    rayVersion: RAY_VERSION,
    authOptions: { ...RAY_AUTH },
    enableInTreeAutoscaling: false,
    headGroupSpec: {
      rayStartParams: {
        "num-cpus": "0",
        "num-gpus": "0",
        "object-store-memory": gibToBytesString(head.objectStoreGiB),
      },
      template: { metadata: podMetadata(labels), spec: headPod(input, env) },
    },
    workerGroupSpecs: [
      {
        groupName: worker.groupName,
        replicas: worker.replicas,
        minReplicas: worker.replicas,
        maxReplicas: worker.replicas,
        rayStartParams: {
          "object-store-memory": gibToBytesString(worker.objectStoreGiB),
          "object-spilling-directory": SPILL_PATH,
        },
        template: {
          metadata: podMetadata({ ...labels, ...(worker.spot ? noticeParts().labels : {}) }),
          spec: workerPod(input, env),
        },
      },
    ],
  };
}
