import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { planStack } from "../../workloads/stack";
import { promiseOf, setupPulumiMocks, stackFileConfig } from "../helpers/pulumi-mocks";
import { repoRoot, repoStack, runtime } from "../helpers/fixtures";
import { submitExamples } from "../components/run-program";

describe("stacks/index.ts under Pulumi mocks (dev stack, example flags dropped)", () => {
  it("creates each workload's RayJob as a ray.io/v1 custom resource, exactly as planned", async () => {
    const config = stackFileConfig(join(repoRoot, "Pulumi.dev.yaml"));
    submitExamples(config);
    const recorded = await setupPulumiMocks(config);
    const program = (await import("../../stacks/index.js")) as {
      rayJobs: pulumi.Output<string[]>;
      environment: string;
    };
    expect(await promiseOf(program.rayJobs)).toEqual([
      "llm-pretrain",
      "embed-chunks",
      "llm-sweep",
      "sft-qwen2-vl",
      "sft-llama-8b",
      "sft-mistral-7b",
    ]);
    expect(program.environment).toBe("dev");

    expect(recorded.filter((r) => r.type === "ray-gpu:index:RayWorkload").map((r) => r.name)).toEqual([
      "llm-pretrain",
      "embed-chunks",
      "llm-sweep",
      "sft-qwen2-vl",
      "sft-llama-8b",
      "sft-mistral-7b",
    ]);
    const job = recorded.find((r) => r.type === "kubernetes:ray.io/v1:RayJob" && r.name === "llm-pretrain-rayjob");
    expect(job?.name).toBe("llm-pretrain-rayjob");
    expect(job?.parent).toContain("RayWorkload::llm-pretrain");
    const expected = planStack(repoStack("dev"), { runtime }).objects[0]!.objects.find((o) => o.kind === "RayJob")!;
    if (expected.kind !== "RayJob") throw new Error("expected a RayJob");
    expect(job?.inputs).toMatchObject({
      apiVersion: "ray.io/v1",
      kind: "RayJob",
      metadata: expected.metadata,
      spec: JSON.parse(JSON.stringify(expected.spec)),
    });

    // Through the queue, protected from eviction, and only one job restarts when its spec changes.
    expect(job?.inputs).toMatchObject({
      metadata: { labels: { "kueue.x-k8s.io/queue-name": "ray-gpu" } },
      spec: { shutdownAfterJobFinishes: true },
    });
    expect(job?.replaceOnChanges).toEqual(["spec"]);
    expect(job?.ignoreChanges).toEqual(["spec.suspend"]);
    const pdb = recorded.find(
      (r) => r.type === "kubernetes:policy/v1:PodDisruptionBudget" && r.parent?.includes("llm-pretrain"),
    );
    expect(pdb?.inputs).toMatchObject({
      spec: {
        minAvailable: 2, // the head and the submitter: the spot worker is left to the drain (its hook checkpoints)
        selector: {
          matchLabels: { "ray-gpu.io/workload": "llm-pretrain" },
          matchExpressions: [{ key: "ray-gpu.io/evict", operator: "DoesNotExist" }],
        },
      },
    });
    const queueWait = recorded.find((r) => r.type === "ray-gpu:index:RayWorkload" && r.name === "llm-pretrain");
    const localQueue = recorded.find((r) => r.type === "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue");
    expect(localQueue?.inputs).toMatchObject({ metadata: { name: "ray-gpu", namespace: "ray-jobs" } });
    expect(queueWait?.dependencies.some((d) => d.includes("JobQueue"))).toBe(true);
  });
});
