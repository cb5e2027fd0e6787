import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { promiseOf, settlePreview, setupPulumiMocks, stackFileConfig } from "../helpers/pulumi-mocks";
import { repoRoot } from "../helpers/fixtures";

// Pulumi's mock runtime is process-global and the program runs once per import: one program per test file.
describe("stacks/index.ts under Pulumi mocks (dev stack as shipped)", () => {
  it("submits no example workload: the first pulumi up of the example stack creates the platform only", async () => {
    const recorded = await setupPulumiMocks(stackFileConfig(join(repoRoot, "Pulumi.dev.yaml")));
    const program = (await import("../../stacks/index.js")) as {
      rayJobs: pulumi.Output<string[]>;
      examplesNotSubmitted: string[];
    };
    expect(await promiseOf(program.rayJobs)).toEqual([]);
    expect(program.examplesNotSubmitted).toEqual([
      "llm-pretrain",
      "embed-chunks",
      "llm-sweep",
      "sft-qwen2-vl",
      "sft-llama-8b",
      "sft-mistral-7b",
    ]);
    await settlePreview();
    expect(
      recorded.filter((r) => r.type === "kubernetes:ray.io/v1:RayJob" || r.type === "ray-gpu:index:RayWorkload"),
    ).toEqual([]);
    expect(recorded.some((r) => r.type === "aws:eks/cluster:Cluster")).toBe(true);
  });
});
