import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planClusterShape, type ClusterShapeInput } from "../../../core/cluster/shape";
import { GPU_INSTANCES, GPU_INSTANCE_TYPES, type GpuInstanceType } from "../../../core/catalog/instances";
import { ConfigError } from "../../../core/errors";
import { PlatformSchema } from "../../../core/config/platform";
import { planPools, type PoolsPlan } from "../../../core/pools";
import { KIND_STRATEGIES } from "../../../workloads/kinds/table";
const TRAINING_WORKER_NEEDS = KIND_STRATEGIES.TrainingJob.needs;
import { renderRayJob } from "../../../workloads/rayjob/render";
import { checkRayJob } from "../../../workloads/rayjob/checks";

function pools(
  instanceType: GpuInstanceType,
  maxNodes: number,
  extra: Record<string, unknown> = {},
  cpu: Record<string, unknown> = {},
): PoolsPlan {
  return planPools(
    PlatformSchema.parse({
      cluster: { mode: "create", name: "t" },
      cpuNodeGroup: cpu,
      gpuNodeGroups: [{ name: "gpu", instanceType, maxNodes, ...extra }],
    }),
  );
}

function shape(p: PoolsPlan, gpus: number, environment: "dev" | "prod" = "dev", more: Partial<ClusterShapeInput> = {}) {
  return planClusterShape({
    environment,
    gpus,
    gpuPool: p.gpu[0]!,
    headPool: p.cpu,
    needs: TRAINING_WORKER_NEEDS,
    path: "ray-gpu:workloads[0]",
    ...more,
  });
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

describe("RayJob cluster shape", () => {
  it("gives each g5.12xlarge node one worker with all 4 GPUs and everything the node can spare", () => {
    const s = shape(pools("g5.12xlarge", 8), 32, "prod");
    expect(s.worker).toMatchObject({
      replicas: 8,
      gpusPerWorker: 4,
      cpus: 47,
      memoryGiB: 168,
      objectStoreGiB: 33,
      shmGiB: 41,
      heapGiB: 127,
    });
    expect(s.worker.nodeSelector).toEqual({ "ray-gpu.io/pool": "gpu" });
    expect(s.worker.tolerations).toEqual([{ key: "nvidia.com/gpu", value: "true", effect: "NoSchedule" }]);
  });

  it("sizes the head for the cluster, not a fixed guess", () => {
    const p = pools("g5.12xlarge", 8, {}, { instanceType: "m6i.4xlarge" });
    expect(shape(p, 4).head).toMatchObject({ cpus: 3, memoryGiB: 10 });
    expect(shape(p, 32).head).toMatchObject({ cpus: 6, memoryGiB: 24, objectStoreGiB: 6, shmGiB: 7 });
  });

  it("explains every tuned value", () => {
    const s = shape(pools("g5.12xlarge", 8), 8);
    const keys = s.decisions.map((d) => d.key);
    for (const k of [
      "head.numCpus",
      "head.cpus",
      "head.memoryGiB",
      "worker.replicas",
      "worker.cpus",
      "worker.memoryGiB",
      "worker.objectStoreGiB",
      "worker.shmGiB",
      "worker.spillGiB",
      "env.PYTORCH_CUDA_ALLOC_CONF",
      "lifecycle.activeDeadlineSeconds",
      "lifecycle.cleanup",
    ]) {
      expect(keys).toContain(k);
    }
    expect(s.decisions.every((d) => d.reason.length > 20)).toBe(true);
  });

  it("sets NCCL socket threads only across nodes, and the EFA provider only with EFA", () => {
    expect(shape(pools("g5.12xlarge", 8), 4).worker.env).not.toHaveProperty("NCCL_SOCKET_NTHREADS");
    expect(shape(pools("g5.12xlarge", 8), 8).worker.env).toMatchObject({
      NCCL_SOCKET_IFNAME: "eth0",
      NCCL_SOCKET_NTHREADS: "2",
      NCCL_NSOCKS_PERTHREAD: "8",
    });
    const efa = shape(pools("g5.12xlarge", 8, { efa: true, availabilityZone: "us-east-1a" }), 8).worker;
    expect(efa.env).toMatchObject({ FI_PROVIDER: "efa", NCCL_NET: "AWS Libfabric", NCCL_SOCKET_IFNAME: "eth0" });
    expect(efa.env).not.toHaveProperty("NCCL_SOCKET_NTHREADS");
    expect(efa.efa).toEqual({ interfaces: 1, hugepagesMiB: 5120 });
  });

  it("gives EFA only to workers that cross nodes: one node's collectives stay on its PCIe", () => {
    const one = shape(pools("g5.12xlarge", 8, { efa: true, availabilityZone: "us-east-1a" }), 4);
    expect(one.worker.replicas).toBe(1);
    expect(one.worker.efa).toBe(false);
    expect(one.worker.env).not.toHaveProperty("FI_PROVIDER");
    expect(one.decisions.find((d) => d.key === "worker.efa")?.value).toBe("none");
  });

  it("sizes an EFA worker's memory to what the node has left after its hugepages", () => {
    const plain = shape(pools("g5.48xlarge", 4), 32).worker;
    const efa = shape(pools("g5.48xlarge", 4, { efa: true, availabilityZone: "us-east-1a" }), 32).worker;
    // 5,128 pages of 2 MiB leave the kubelet's allocatable; the pod takes 5,120 MiB of them as hugepages.
    expect(plain.memoryGiB - efa.memoryGiB).toBeGreaterThanOrEqual(Math.floor((5128 * 2) / 1024));
    expect(efa.replicas).toBe(4);
  });

  it("uses dev and prod lifecycles that KubeRay accepts", () => {
    expect(shape(pools("g5.2xlarge", 4), 1, "dev").lifecycle).toMatchObject({
      cleanup: { mode: "shutdown", ttlSeconds: 0 },
      backoffLimit: 0,
      activeDeadlineSeconds: 7200,
    });
    const prod = shape(pools("g5.2xlarge", 4), 1, "prod", { maxRuntimeMinutes: 90 }).lifecycle;
    expect(prod).toMatchObject({ backoffLimit: 2, activeDeadlineSeconds: 5400, preRunningDeadlineSeconds: 2700 });
    expect(prod.cleanup.mode).toBe("rules");
  });

  it("rejects a GPU count that is not a whole number of nodes, naming the fix", () => {
    expect(errorOf(() => shape(pools("g5.12xlarge", 8), 6))).toBe(
      "1 problem\n  ✖ ray-gpu:workloads[0].gpus: must be a multiple of 4 (GPUs per g5.12xlarge node of pool " +
        '"gpu"): use 4 or 8, or a pool of 1-GPU instances (got 6)',
    );
  });

  it("rejects more nodes than the pool may have", () => {
    expect(errorOf(() => shape(pools("g5.12xlarge", 2), 16))).toContain(
      'needs 4 g5.12xlarge nodes but pool "gpu" has maxNodes 2; raise its maxNodes or ask for fewer GPUs (got 16)',
    );
  });

  it("rejects a head that does not fit the CPU pool, naming a size that does", () => {
    const msg = errorOf(() => shape(pools("g5.xlarge", 64, {}, { instanceType: "m6i.large" }), 64));
    expect(msg).toContain(
      "✖ ray-gpu:platform.cpuNodeGroup.instanceType: the Ray head of ray-gpu:workloads[0] (64 worker nodes) " +
        "needs 16 CPUs and 128 GiB, but a m6i.large node offers 1 CPUs and 5 GiB; use m6i.12xlarge or larger",
    );
  });

  it("property: for any g5 pool and any valid GPU count, pods fit the node and the GPU count is met exactly", () => {
    const arb = fc
      .record({
        instanceType: fc.constantFrom(...GPU_INSTANCE_TYPES),
        maxNodes: fc.integer({ min: 1, max: 16 }),
        reserveCpu: fc.integer({ min: 0, max: 2000 }),
        reserveMem: fc.integer({ min: 0, max: 4096 }),
        environment: fc.constantFrom("dev" as const, "prod" as const),
      })
      .chain((r) => fc.record({ r: fc.constant(r), nodes: fc.integer({ min: 1, max: r.maxNodes }) }));
    fc.assert(
      fc.property(arb, ({ r, nodes }) => {
        const p = pools(
          r.instanceType,
          r.maxNodes,
          { daemonSetReserve: { cpuMillis: r.reserveCpu, memoryMiB: r.reserveMem } },
          { instanceType: "m6i.8xlarge" },
        );
        const gpus = nodes * GPU_INSTANCES[r.instanceType].gpus;
        const s = shape(p, gpus, r.environment);
        const pool = p.gpu[0]!;
        expect(s.worker.replicas * s.worker.gpusPerWorker).toBe(gpus);
        expect(s.worker.cpus * 1000 + pool.daemonSetReserve.cpuMillis).toBeLessThanOrEqual(pool.allocatable.cpuMillis);
        expect(s.worker.memoryGiB * 1024 + pool.daemonSetReserve.memoryMiB).toBeLessThanOrEqual(
          pool.allocatable.memoryMiB,
        );
        expect(s.worker.objectStoreGiB).toBeLessThan(s.worker.shmGiB);
        expect(s.worker.shmGiB).toBeLessThan(s.worker.memoryGiB);
        expect(s.head.cpus * 1000 + p.cpu.daemonSetReserve.cpuMillis).toBeLessThanOrEqual(p.cpu.allocatable.cpuMillis);
        const job = renderRayJob({
          name: "t",
          namespace: "ns",
          kind: "TrainingJob",
          environment: r.environment,
          image: "i",
          entrypoint: "e",
          shape: s,
          serviceAccountName: "ray-workloads",
        });
        expect(checkRayJob(job, p)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
