import { describe, expect, it } from "vitest";
import { planStack } from "../../workloads/stack";
import type { ConfigMap, RayJob } from "../../workloads/k8s/types";
import type { TuningDocument } from "../../workloads/contract/document";
import { configWith, repoStack, runtime } from "../helpers/fixtures";

function rendered(env: "dev" | "prod", workload: string) {
  const plan = planStack(repoStack(env), { runtime });
  const objects = plan.objects.find((o) => o.workload === workload)!.objects;
  const cm = objects.find((o): o is ConfigMap => o.kind === "ConfigMap")!;
  const job = objects.find((o): o is RayJob => o.kind === "RayJob")!;
  return {
    plan: plan.workloads.find((w) => w.name === workload)!,
    cm,
    job,
    doc: JSON.parse(cm.data["tuning.json"]!) as TuningDocument,
  };
}

describe("the tuning handed to user code", () => {
  it.each(["dev", "prod"] as const)(
    "mounts tuning.json at /etc/ray-gpu on every Ray container and points RAY_GPU_TUNING_FILE at it (%s)",
    (env) => {
      const { cm, job } = rendered(env, "llm-pretrain");
      const pods = [
        job.spec.rayClusterSpec.headGroupSpec.template.spec,
        ...job.spec.rayClusterSpec.workerGroupSpecs.map((g) => g.template.spec),
      ];
      for (const pod of pods) {
        expect(pod.volumes).toContainEqual({ name: "ray-gpu-tuning", configMap: { name: cm.metadata.name } });
        expect(pod.containers[0]!.volumeMounts).toContainEqual({
          name: "ray-gpu-tuning",
          mountPath: "/etc/ray-gpu",
          readOnly: true,
        });
        expect(pod.containers[0]!.env).toContainEqual({
          name: "RAY_GPU_TUNING_FILE",
          value: "/etc/ray-gpu/tuning.json",
        });
        expect(pod.containers[0]!.env).toContainEqual({
          name: "RAY_GPU_STORAGE_BUCKET",
          valueFrom: { configMapKeyRef: { name: "ray-gpu-storage", key: "bucket", optional: true } },
        });
      }
    },
  );

  it("writes the planner's knobs and Ray Train's settings, keeping the global batch exactly in both environments", () => {
    for (const env of ["dev", "prod"] as const) {
      const { doc, plan } = rendered(env, "llm-pretrain");
      expect(doc).toMatchObject({
        apiVersion: "ray-gpu.io/v1",
        kind: "Tuning",
        workload: { name: "llm-pretrain", kind: "TrainingJob", environment: env },
      });
      expect(doc.knobs).toEqual(plan.memory.knobs);
      const k = doc.knobs as Record<string, number>;
      expect(k["microBatchSize"]! * k["gradientAccumulationSteps"]! * k["gpus"]!).toBe(64);
      expect(doc.train).toMatchObject({
        numWorkers: plan.gpus,
        resourcesPerWorker: { GPU: 1 },
        checkpointPrefix: "ray/checkpoints/llm-pretrain/",
      });
      // Workers' CPUs fit the pod, with one left for Ray Data and the raylet.
      expect(doc.train!.resourcesPerWorker.CPU * plan.shape.worker.gpusPerWorker).toBeLessThanOrEqual(
        plan.shape.worker.cpus - 1,
      );
    }
    // The dev pools run on spot: an interruption is survived by restarting from the last checkpoint.
    expect(rendered("dev", "llm-pretrain").doc.train).toMatchObject({ maxFailures: 3, checkpointsToKeep: 1 });
    const onDemandDev = planStack(
      configWith((c) => (c.platform.gpuNodeGroups[0]!["capacityType"] = "on-demand")),
      { runtime, requireRender: true },
    ).workloads[0]!;
    expect(onDemandDev.tuning.decisions.find((d) => d.key === "train.maxFailures")?.value).toBe(0);
    expect(rendered("prod", "llm-pretrain").doc.train).toMatchObject({ maxFailures: 3, checkpointsToKeep: 3 });
  });

  it("writes a DeepSpeed config matching the plan when ZeRO is used, and none for plain DDP", () => {
    const { cm, doc } = rendered("prod", "llm-pretrain");
    const ds = JSON.parse(cm.data["deepspeed.json"]!) as Record<string, unknown> & {
      zero_optimization: Record<string, unknown>;
    };
    const k = doc.knobs as Record<string, number>;
    expect(ds).toMatchObject({
      train_batch_size: 64,
      train_micro_batch_size_per_gpu: k["microBatchSize"],
      gradient_accumulation_steps: k["gradientAccumulationSteps"],
      bf16: { enabled: true },
    });
    expect(ds.zero_optimization).toMatchObject({
      stage: k["zeroStage"],
      overlap_comm: true,
      reduce_bucket_size: 200000000,
    });
    expect(doc.train!.deepspeedConfigFile).toBe("/etc/ray-gpu/deepspeed.json");
    const lora = rendered("prod", "sft-llama-8b");
    expect((lora.doc.knobs as Record<string, unknown>)["zeroStage"]).toBe(0);
    expect(lora.cm.data["deepspeed.json"]).toBeUndefined();
  });

  it("explains every Ray Train value in the plan", () => {
    const keys = rendered("prod", "llm-pretrain").plan.tuning.decisions.map((d) => d.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        "train.numWorkers",
        "train.resourcesPerWorker.CPU",
        "train.dataloaderWorkers",
        "train.checkpointsToKeep",
        "train.maxFailures",
        "train.checkpointPrefix",
        "deepspeed.reduce_bucket_size",
      ]),
    );
  });

  it("hands inference and embedding jobs their knobs too", () => {
    expect(rendered("prod", "llm-sweep").doc.knobs).toMatchObject({ tensorParallelSize: 1, replicas: 8 });
    expect(rendered("prod", "embed-chunks").doc.knobs).toHaveProperty("batchSize");
    expect(rendered("prod", "llm-sweep").doc.train).toBeUndefined();
  });
});
