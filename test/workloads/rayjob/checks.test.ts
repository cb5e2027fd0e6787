import { describe, expect, it } from "vitest";
import { checkRayJob } from "../../../workloads/rayjob/checks";
import { planStack } from "../../../workloads/stack";
import type { RayJob } from "../../../workloads/k8s/types";
import { configWith, runtime } from "../../helpers/fixtures";

/** A job of `environment`; prod runs without the queue unless `queued`, so its deletion rules are there to break. */
function fixture(environment: "dev" | "prod" = "dev", queued = environment === "dev") {
  const plan = planStack(
    configWith((c) => {
      c.environment = environment;
      c.platform["queueing"] = { enabled: queued };
    }),
    { runtime },
  );
  const job = structuredClone(plan.objects[0]!.objects.find((o) => o.kind === "RayJob")) as RayJob;
  return { job, pools: plan.pools };
}

function messages(mutate: (job: RayJob) => void, environment: "dev" | "prod" = "dev"): string[] {
  const { job, pools } = fixture(environment);
  mutate(job);
  return checkRayJob(job, pools).map((i) => `${i.path}: ${i.message}`);
}

const head = (j: RayJob) => j.spec.rayClusterSpec.headGroupSpec;
const worker = (j: RayJob) => j.spec.rayClusterSpec.workerGroupSpecs[0]!;

describe("plan-time KubeRay checks", () => {
  it("refuses a queued job Kueue's webhook would refuse: no shutdown after the job, in-tree autoscaling, a group named head", () => {
    const { job, pools } = fixture("prod", true);
    job.spec.shutdownAfterJobFinishes = false;
    job.spec.rayClusterSpec.enableInTreeAutoscaling = true;
    job.spec.rayClusterSpec.workerGroupSpecs[0]!.groupName = "head";
    expect(checkRayJob(job, pools).map((i) => `${i.path}: ${i.message}`)).toEqual([
      "RayJob train: spec.shutdownAfterJobFinishes: a kueue managed job should delete the cluster after finishing",
      "RayJob train: spec.rayClusterSpec.enableInTreeAutoscaling: Kueue refuses in-tree autoscaling for a queued job",
      'RayJob train: spec.rayClusterSpec.workerGroupSpecs[0].groupName: Kueue reserves the name "head"',
    ]);
  });

  it("passes the rendered dev and prod jobs", () => {
    for (const [env, queued] of [
      ["dev", true],
      ["prod", true],
      ["prod", false],
    ] as const) {
      const { job, pools } = fixture(env, queued);
      expect(checkRayJob(job, pools)).toEqual([]);
    }
  });

  it("rejects a GPU on the head, and a head that runs work", () => {
    const msgs = messages((j) => {
      head(j).template.spec.containers[0]!.resources.limits["nvidia.com/gpu"] = "1";
      head(j).rayStartParams["num-cpus"] = "4";
    });
    expect(msgs).toEqual([
      'RayJob train: spec.rayClusterSpec.headGroupSpec.rayStartParams.num-cpus: the head must run no work: set num-cpus "0"',
      "RayJob train: spec.rayClusterSpec.headGroupSpec.template.spec.containers[0].resources.limits: the head " +
        "must not get a GPU: it belongs on the CPU pool",
    ]);
  });

  it("rejects a worker asking for more GPUs, CPU or memory than its node has", () => {
    const msgs = messages((j) => {
      const r = worker(j).template.spec.containers[0]!.resources.limits;
      r["nvidia.com/gpu"] = "8";
      r.cpu = "48";
      r.memory = "180Gi";
    });
    expect(msgs).toEqual([
      "RayJob train: spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].resources.limits.cpu: a " +
        "g5.12xlarge node offers 47 CPUs to a Ray pod",
      "RayJob train: " +
        "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].resources.limits.memory: a " +
        "g5.12xlarge node offers 168Gi to a Ray pod",
      "RayJob train: " +
        "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].resources.limits.nvidia.com/gpu: a " +
        "g5.12xlarge node has 4 GPU(s)",
    ]);
  });

  it("rejects a worker without the GPU taint's toleration, or selecting no GPU pool", () => {
    expect(messages((j) => (worker(j).template.spec.tolerations = []))).toEqual([
      "RayJob train: spec.rayClusterSpec.workerGroupSpecs[0].template.spec.tolerations: must tolerate the pool's " +
        "taint nvidia.com/gpu=true:NoSchedule, or no node will take the pod",
    ]);
    expect(messages((j) => (worker(j).template.spec.nodeSelector = { "ray-gpu.io/pool": "nope" }))).toEqual([
      "RayJob train: spec.rayClusterSpec.workerGroupSpecs[0].template.spec.nodeSelector: must select a GPU pool " +
        "with ray-gpu.io/pool; pools are a10g-4x",
    ]);
  });

  it("rejects a TTL without shutdown, and deletion rules mixed with shutdown or a TTL", () => {
    expect(messages((j) => ((j.spec.shutdownAfterJobFinishes = false), (j.spec.ttlSecondsAfterFinished = 60)))).toEqual(
      [
        "RayJob train: spec.ttlSecondsAfterFinished: a RayJob with shutdownAfterJobFinishes set to false cannot " +
          "have TTLSecondsAfterFinished",
        "RayJob train: spec.shutdownAfterJobFinishes: a kueue managed job should delete the cluster after finishing",
      ],
    );
    expect(
      messages((j) => ((j.spec.shutdownAfterJobFinishes = true), (j.spec.ttlSecondsAfterFinished = 60)), "prod"),
    ).toEqual([
      "RayJob train: spec.deletionStrategy.deletionRules: spec.shutdownAfterJobFinishes and " +
        "spec.deletionStrategy.deletionRules are mutually exclusive",
      "RayJob train: spec.ttlSecondsAfterFinished: a global TTL cannot be combined with deletionRules; put ttlSeconds on each rule",
    ]);
  });

  it("rejects deletion rules KubeRay would reject: TTL order and duplicates", () => {
    const msgs = messages((j) => {
      const rules = j.spec.deletionStrategy!.deletionRules;
      rules[1]!.condition.ttlSeconds = 7200; // DeleteWorkers on FAILED after DeleteCluster (3600)
      rules.push({ ...rules[0]!, condition: { ...rules[0]!.condition } });
    }, "prod");
    expect(msgs).toEqual([
      "RayJob train: spec.deletionStrategy.deletionRules[5]: duplicate rule for DeletionPolicyType " +
        "'DeleteCluster' and JobStatus 'SUCCEEDED'",
      "RayJob train: spec.deletionStrategy.deletionRules: for JobStatus 'FAILED': DeleteCluster TTL (3600) must " +
        "be >= DeleteWorkers TTL (7200)",
    ]);
  });

  it("rejects min > max replicas and an object store larger than /dev/shm", () => {
    const msgs = messages((j) => {
      worker(j).minReplicas = 3;
      worker(j).rayStartParams["object-store-memory"] = String(100 * 2 ** 30);
    });
    expect(msgs).toEqual([
      "RayJob train: spec.rayClusterSpec.workerGroupSpecs[0].minReplicas: worker group gpu-a10g-4x has " +
        "minReplicas 3 greater than maxReplicas 2",
      "RayJob train: spec.rayClusterSpec.workerGroupSpecs[0].replicas: replicas must be between minReplicas (3) and maxReplicas (2)",
      "RayJob train: spec.rayClusterSpec.workerGroupSpecs[0].rayStartParams.object-store-memory: object store " +
        "(100.0 GiB) must fit in /dev/shm (41.0 GiB), or Ray falls back to slow disk-backed memory",
    ]);
  });

  it("rejects names KubeRay rejects and non-positive deadlines", () => {
    const msgs = messages((j) => {
      j.metadata.name = "Train_Job";
      j.spec.activeDeadlineSeconds = 0;
      j.spec.preRunningDeadlineSeconds = -1;
    });
    expect(msgs).toEqual([
      "RayJob Train_Job: metadata.name: RayJob name should be a valid DNS1035 label",
      "RayJob Train_Job: spec.activeDeadlineSeconds: activeDeadlineSeconds must be a positive integer",
      "RayJob Train_Job: spec.preRunningDeadlineSeconds: preRunningDeadlineSeconds must be a positive integer",
    ]);
  });
});
