/**
 * Job queueing: quotas from the pools, which jobs would wait, the queue objects as Kueue's API server would take them
 * (its v0.19.2 CRDs and CEL rules), the chart values against the chart's own values file, and RayJobs Kueue admits.
 */
import { keysNotInChart } from "../../helpers/helm-values";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { ENVIRONMENT_PROFILES } from "../../../core/environments";
import { POOL_LABEL } from "../../../core/pools";
import {
  kueueRelease,
  KUEUE_CHART,
  neverAdmitted,
  planAdmission,
  QUEUE_NAME_LABEL,
  WAIT_FOR_PODS_READY_MINUTES,
  type QueueDemand,
} from "../../../core/platform/queueing";
import type { ClusterQueue, KubeObject, RayJob, ResourceFlavor } from "../../../workloads/k8s/types";
import { POD_ANNOTATIONS } from "../../../workloads/raycluster/labels";
import { cpuQuantity, memoryQuantity } from "../../../workloads/queue/kueue";
import { neverAdmittedIssues } from "../../../workloads/queue/never-admitted";
import { planStack } from "../../../workloads/stack";
import { CrdConformance } from "../../helpers/crd-conformance";
import { configWith, repoStack, runtime } from "../../helpers/fixtures";
import { FALLBACK_POOL, prodWithFallback } from "../../helpers/spot-fallback";

const FIXTURES = resolve(__dirname, "../../fixtures/kueue-0.19.2");
const prod = planStack(repoStack("prod"), { runtime, requireRender: true });
const kinds = (objs: readonly KubeObject[], kind: string) => objs.filter((o) => o.kind === kind);
const jobs = (plan: typeof prod) =>
  plan.objects.flatMap((o) => o.objects).filter((o): o is RayJob => o.kind === "RayJob");

describe("queue quotas and admission", () => {
  it("gives each pool maxNodes × its Ray pod as quota, and says which prod jobs would wait", () => {
    const q = prod.queue!;
    expect(q.plan.quotas.find((p) => p.pool === "train-a10g-4x")).toEqual({
      pool: "train-a10g-4x",
      role: "gpu",
      gpus: 32,
      cpus: 8 * 47,
      memoryGiB: 8 * 168,
    });
    expect(q.plan.quotas.find((p) => p.pool === "efa-a10g-8x")).toEqual({
      pool: "efa-a10g-8x",
      role: "gpu",
      gpus: 32,
      cpus: 4 * 191,
      memoryGiB: 4 * 695,
    });
    const infer = q.admission.pools.find((p) => p.pool === "infer-a10g-1x")!;
    expect(infer.askedGpus).toBeGreaterThan(infer.quotaGpus);
    // FIFO in config order: the first job on each pool runs, later ones wait for that pool's quota.
    expect(q.admission.admitted).toEqual(expect.arrayContaining(["llm-pretrain", "embed-chunks", "sft-llama-8b"]));
    expect(q.admission.queued).toEqual([{ workload: "llm-sweep", waitsFor: "infer-a10g-1x" }]);
    expect(q.admission.admitted.length + q.admission.queued.length).toBe(prod.workloads.length);
  });

  it("admits a later job that fits the quota a waiting one could not use (BestEffortFIFO), and waits on the CPU pool", () => {
    const quota = {
      name: "q",
      namespace: "ns",
      waitForPodsReadyMinutes: 15,
      quotas: [
        { pool: "sys", role: "system" as const, gpus: 0, cpus: 8, memoryGiB: 32 },
        { pool: "gpu", role: "gpu" as const, gpus: 4, cpus: 40, memoryGiB: 160 },
      ],
    };
    const job = (workload: string, gpus: number, headCpus = 2): QueueDemand => ({
      workload,
      example: false,
      gpuPool: "gpu",
      gpus,
      workerCpus: gpus * 10,
      workerMemoryGiB: gpus * 40,
      headCpus,
      headMemoryGiB: 4,
    });
    const a = planAdmission(quota, [job("big", 4), job("bigger", 8), job("small", 1), job("cpu-heavy", 0, 7)]);
    expect(a.admitted).toEqual(["big"]);
    expect(a.queued).toEqual([
      { workload: "bigger", waitsFor: "gpu" },
      { workload: "small", waitsFor: "gpu" },
      { workload: "cpu-heavy", waitsFor: "sys" },
    ]);
    expect(planAdmission(quota, [job("small", 1), job("bigger", 8), job("small2", 3)]).admitted).toEqual([
      "small",
      "small2",
    ]);
  });

  it("requeues a job that cannot start before any environment's pre-running deadline would fail it", () => {
    for (const [env, p] of Object.entries(ENVIRONMENT_PROFILES))
      expect(p.preRunningDeadlineSeconds, env).toBeGreaterThan(WAIT_FOR_PODS_READY_MINUTES * 60);
  });

  it("is off on request: no queue objects, no label, and prod keeps its failed heads (deletionRules)", () => {
    const off = planStack(
      configWith((c) => {
        c.environment = "prod";
        c.platform["queueing"] = { enabled: false };
        c.platform.gpuNodeGroups[0]!["maxNodes"] = 2;
      }),
      { runtime, requireRender: true },
    );
    expect(off.queue).toBeUndefined();
    expect(off.shared.filter((o) => o.apiVersion.startsWith("kueue"))).toEqual([]);
    const job = jobs(off)[0]!;
    expect(job.metadata.labels).not.toHaveProperty(QUEUE_NAME_LABEL);
    expect(job.spec.suspend).toBeUndefined();
    expect(job.spec.deletionStrategy?.deletionRules.length).toBeGreaterThan(0);
  });
});

describe("RayJobs submitted through the queue", () => {
  const queued = planStack(
    configWith((c) => {
      c.environment = "prod";
    }),
    { runtime, requireRender: true },
  );

  it("are labelled with the LocalQueue, leave `suspend` to Kueue, and shut down after the job (Kueue's webhook rule)", () => {
    for (const job of jobs(queued)) {
      expect(job.metadata.labels?.[QUEUE_NAME_LABEL]).toBe("ray-gpu");
      // Kueue's webhook sets it on create and clears it on admission; rendered, a refresh would make it a diff.
      expect(job.spec.suspend).toBeUndefined();
      expect(job.spec.shutdownAfterJobFinishes).toBe(true);
      expect(job.spec.deletionStrategy).toBeUndefined();
      expect(job.spec.rayClusterSpec.enableInTreeAutoscaling).toBe(false);
    }
  });

  it("mark every Ray pod and the submitter not safe to evict, and a PodDisruptionBudget selects exactly the job's pods", () => {
    const objects = queued.objects[0]!.objects;
    const job = objects.find((o): o is RayJob => o.kind === "RayJob")!;
    const templates = [
      job.spec.rayClusterSpec.headGroupSpec.template,
      ...job.spec.rayClusterSpec.workerGroupSpecs.map((g) => g.template),
      job.spec.submitterPodTemplate!,
    ];
    for (const t of templates) expect(t.metadata?.annotations).toEqual(POD_ANNOTATIONS);
    const pdb = objects.find((o) => o.kind === "PodDisruptionBudget");
    // Every pod of the job must stay: head, each worker, the submitter.
    const pods = 1 + job.spec.rayClusterSpec.workerGroupSpecs.reduce((n, g) => n + g.replicas, 0) + 1;
    expect(pdb).toMatchObject({ spec: { minAvailable: pods }, metadata: { namespace: job.metadata.namespace } });
    const selector = (pdb as { spec: { selector: { matchLabels: Record<string, string> } } }).spec.selector.matchLabels;
    for (const t of templates) expect(t.metadata?.labels).toMatchObject(selector);
    // No other job's pods match it.
    const other = jobs(prod).find((j) => j.metadata.name !== job.metadata.name)!;
    expect(other.spec.rayClusterSpec.headGroupSpec.template.metadata?.labels).not.toMatchObject(selector);
  });

  it("select exactly one flavor per pod set: the head and workers' pool labels name flavors of the ClusterQueue", () => {
    const flavors = kinds(queued.shared, "ResourceFlavor") as ResourceFlavor[];
    const cq = kinds(queued.shared, "ClusterQueue")[0] as ClusterQueue;
    const inQueue = new Set(cq.spec.resourceGroups[0]!.flavors.map((f) => f.name));
    for (const job of jobs(queued)) {
      const spec = job.spec.rayClusterSpec;
      const podSets = [
        spec.headGroupSpec.template.spec,
        ...spec.workerGroupSpecs.map((g) => g.template.spec),
        job.spec.submitterPodTemplate!.spec,
      ];
      for (const pod of podSets) {
        const matching = flavors.filter((f) => f.spec.nodeLabels[POOL_LABEL] === pod.nodeSelector?.[POOL_LABEL]);
        expect(matching).toHaveLength(1);
        expect(inQueue.has(matching[0]!.metadata.name)).toBe(true);
      }
    }
  });
});

describe("queue object names", () => {
  it("never collide across namespaces and pools, and stay valid for the longest namespace", () => {
    const names = (ns: string, pools: string[]) =>
      planStack(
        configWith((c) => {
          c.platform["workloadNamespace"] = ns;
          c.platform.gpuNodeGroups = pools.map((name) => ({ name, instanceType: "g5.12xlarge", maxNodes: 4 }));
          c.workloads[0]!["nodePool"] = pools[0];
        }),
        { runtime },
      )
        .shared.filter((o) => o.apiVersion.startsWith("kueue") && o.kind !== "LocalQueue")
        .map((o) => o.metadata.name);
    const a = names("a-b", ["c"]);
    const b = names("a", ["b-c"]);
    expect(a.filter((n) => b.includes(n))).toEqual([]);
    const long = names("n".repeat(63), ["a10g-4x-with-a-long-pool-name", "a10g-4x-with-a-long-pool-name-2"]);
    expect(new Set(long).size).toBe(long.length);
    for (const n of long) expect(n).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
  });
});

describe("queue objects against Kueue v0.19.2", () => {
  let crds: CrdConformance;
  beforeAll(async () => {
    crds = await CrdConformance.loadFiles(
      ["clusterqueues", "localqueues", "resourceflavors"].map((k) => join(FIXTURES, `kueue.x-k8s.io_${k}.yaml`)),
      "v1beta2",
    );
  });

  it("the API server would accept every queue object of both stacks (schema and CEL rules)", () => {
    for (const stack of ["dev", "prod"] as const) {
      const plan = planStack(repoStack(stack), { runtime });
      const queueObjects = plan.shared.filter((o) => o.apiVersion.startsWith("kueue.x-k8s.io/"));
      expect(queueObjects.map((o) => o.kind).sort()).toEqual([
        "ClusterQueue",
        "LocalQueue",
        ...Array(stack === "dev" ? 3 : 4).fill("ResourceFlavor"),
      ]);
      for (const o of queueObjects) expect(crds.validate(o), `${stack} ${o.kind} ${o.metadata.name}`).toEqual([]);
    }
  });

  it("gives a spot-with-fallback pool one flavor over both its node groups, the pool's quota once, as the API server takes it", () => {
    const plain = planStack(repoStack("prod"), { runtime }).shared;
    const fallback = planStack(prodWithFallback(), { runtime }).shared;
    const queueObjects = fallback.filter((o) => o.apiVersion.startsWith("kueue.x-k8s.io/"));
    for (const o of queueObjects) expect(crds.validate(o), `${o.kind} ${o.metadata.name}`).toEqual([]);
    // The same objects as with an on-demand pool: Kueue never moves a job to another flavor for want of nodes, so a
    // flavor per capacity type would pin the job to spot; the Cluster Autoscaler falls back instead.
    expect(queueObjects).toEqual(plain.filter((o) => o.apiVersion.startsWith("kueue.x-k8s.io/")));
    const flavor = kinds(queueObjects, "ResourceFlavor").find((f) => f.metadata.name === `ray-jobs.${FALLBACK_POOL}`);
    expect((flavor as ResourceFlavor).spec.nodeLabels).toEqual({ [POOL_LABEL]: FALLBACK_POOL });
    const cq = kinds(queueObjects, "ClusterQueue")[0] as ClusterQueue;
    const quota = cq.spec.resourceGroups[0]!.flavors.find((f) => f.name === `ray-jobs.${FALLBACK_POOL}`)!.resources;
    expect(quota.find((r) => r.name === "nvidia.com/gpu")!.nominalQuota).toBe("32");
  });

  it("a broken ClusterQueue is refused (the check can fail)", () => {
    const cq = structuredClone(kinds(prod.shared, "ClusterQueue")[0]) as ClusterQueue;
    cq.spec.resourceGroups[0]!.flavors[0]!.resources.pop();
    expect(crds.validate(cq).join("\n")).toMatch(/same number of resources/);
  });

  it("sets only keys the chart's values file has, the pinned version, and a config with only documented fields", () => {
    const values = parse(readFileSync(join(FIXTURES, "values.yaml"), "utf8")) as Record<string, unknown>;
    const ours = kueueRelease("system", "ray-jobs").values;
    expect(keysNotInChart(values, ours, ["nodeSelector"])).toEqual([]);
    expect(KUEUE_CHART.version).toBe("0.19.2");
    // The controller configuration replaces the chart's default string: every key we set is one the default
    // documents (set, or commented out as an option).
    const documented = (values["managerConfig"] as { controllerManagerConfigYaml: string }).controllerManagerConfigYaml;
    const config = parse(
      (ours["managerConfig"] as { controllerManagerConfigYaml: string }).controllerManagerConfigYaml,
    );
    const keys = (o: unknown): string[] =>
      o && typeof o === "object" && !Array.isArray(o) ? Object.entries(o).flatMap(([k, v]) => [k, ...keys(v)]) : [];
    for (const key of keys(config)) expect(documented, key).toMatch(new RegExp(`^\\s*#?\\s*${key}:`, "m"));
  });
});

describe("first deploy and quotas Kueue can keep", () => {
  const config = (namespace?: string) =>
    parse(
      (kueueRelease("system", namespace).values["managerConfig"] as { controllerManagerConfigYaml: string })
        .controllerManagerConfigYaml,
    ) as Record<string, unknown>;

  it("scopes Kueue's job webhooks to the workload namespace, so another chart's hook Job never waits on Kueue", () => {
    // charts/kueue/templates/webhook/manifests.yaml: every job webhook's namespaceSelector is this selector when set.
    expect(config("ray-jobs")["managedJobsNamespaceSelector"]).toEqual({
      matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["ray-jobs"] }],
    });
    expect(config()).not.toHaveProperty("managedJobsNamespaceSelector");
  });

  it("keeps the CPU pool's quota to the millicore and MiB, never floored", () => {
    expect([cpuQuantity(6.83), cpuQuantity(94), cpuQuantity(0.5)]).toEqual(["6830m", "94", "500m"]);
    expect([memoryQuantity(33.5), memoryQuantity(336)]).toEqual(["34304Mi", "336Gi"]);
    const cq = kinds(prod.shared, "ClusterQueue")[0] as ClusterQueue;
    const system = cq.spec.resourceGroups[0]!.flavors.find((f) => f.name === "ray-jobs.system")!.resources;
    const planned = prod.queue!.plan.quotas[0]!;
    expect(system.find((r) => r.name === "cpu")!.nominalQuota).toBe(cpuQuantity(planned.cpus));
    expect(planned.cpus % 1).not.toBe(0);
  });

  const queue = {
    name: "q",
    namespace: "ns",
    waitForPodsReadyMinutes: 15,
    quotas: [
      { pool: "system", role: "system" as const, gpus: 0, cpus: 6.83, memoryGiB: 26.5 },
      { pool: "gpu", role: "gpu" as const, gpus: 8, cpus: 94, memoryGiB: 336 },
    ],
  };
  const job = (headCpus: number, gpus = 4): QueueDemand => ({
    workload: "train",
    example: false,
    gpuPool: "gpu",
    gpus,
    workerCpus: 47,
    workerMemoryGiB: 168,
    headCpus,
    headMemoryGiB: 24.5,
  });

  it("admits a 6.5-CPU head and submitter on 6.83 CPUs (a whole-CPU quota of 6 never would)", () => {
    expect(planAdmission(queue, [job(6.5)]).admitted).toEqual(["train"]);
    expect(neverAdmitted(queue, [job(6.5)])).toEqual([]);
  });

  it("refuses at plan time a job that asks more of a flavor than its whole quota, naming pool, demand, quota and fix", () => {
    expect(neverAdmittedIssues(queue, [job(7), job(1, 16)], () => "ray-gpu:workloads[0]")).toEqual([
      {
        path: "ray-gpu:workloads[0]",
        message:
          "Kueue can never admit train: its head and submitter pods ask 7 CPUs of pool system (flavor ns.system), " +
          "whose whole quota is 6.83 CPUs, so it would wait in the queue forever; raise " +
          "platform.cpuNodeGroup.maxNodes or choose a larger instanceType (the CPU pool's quota is what its nodes at " +
          "maxNodes have left after the platform's pods), or give the job fewer GPUs (its head grows with its workers)",
      },
      {
        path: "ray-gpu:workloads[0]",
        message:
          "Kueue can never admit train: its workers ask 16 GPUs of pool gpu (flavor ns.gpu), whose whole quota is " +
          "8 GPUs, so it would wait in the queue forever; raise the pool's maxNodes, or give the job fewer GPUs",
      },
    ]);
  });
});

describe("every resource a job's pods request is one Kueue can admit", () => {
  /**
   * Kueue's flavor assigner, for what it refuses outright: a pod set requesting a resource that no resource group of
   * the ClusterQueue covers, and that the Configuration's excludeResourcePrefixes does not drop, gets "resource <name>
   * unavailable in ClusterQueue" and is never admitted (pkg/scheduler/flavorassigner/flavorassigner.go).
   */
  function unadmittable(plan: typeof prod): string[] {
    const queue = plan.shared.find((o): o is ClusterQueue => o.kind === "ClusterQueue")!;
    const covered = new Set(queue.spec.resourceGroups.flatMap((g) => g.coveredResources));
    const config = parse(
      (kueueRelease("system", "ray-jobs").values["managerConfig"] as { controllerManagerConfigYaml: string })
        .controllerManagerConfigYaml,
    ) as { resources?: { excludeResourcePrefixes?: string[] } };
    const excluded = config.resources?.excludeResourcePrefixes ?? [];
    return jobs(plan).flatMap((job) => {
      const cluster = job.spec.rayClusterSpec;
      const pods = [cluster.headGroupSpec.template, ...cluster.workerGroupSpecs.map((w) => w.template)];
      const requested = pods.flatMap((p) => p.spec.containers.flatMap((c) => Object.keys(c.resources.requests)));
      return [...new Set(requested)]
        .filter((r) => !covered.has(r) && !excluded.some((prefix) => r.startsWith(prefix)))
        .map((r) => `${job.metadata.name}: ${r}`);
    });
  }

  it("in both stacks, the EFA job's interfaces and hugepages included", () => {
    const efaJob = jobs(prod).find((j) => j.metadata.name === "llm-pretrain")!;
    const requests = efaJob.spec.rayClusterSpec.workerGroupSpecs[0]!.template.spec.containers[0]!.resources.requests;
    expect(Object.keys(requests)).toEqual(expect.arrayContaining(["vpc.amazonaws.com/efa", "hugepages-2Mi"]));
    expect(unadmittable(prod)).toEqual([]);
    expect(unadmittable(planStack(repoStack("dev"), { runtime, requireRender: true }))).toEqual([]);
  });
});
