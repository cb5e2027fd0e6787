import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { setupPulumiMocks, stackFileConfig } from "../helpers/pulumi-mocks";
import { repoRoot } from "../helpers/fixtures";

describe("stacks/index.ts with bad config", () => {
  it("fails with one RunError listing every problem with its ray-gpu: path, and creates nothing", async () => {
    const config = stackFileConfig(join(repoRoot, "Pulumi.dev.yaml"));
    config["ray-gpu:environment"] = "qa";
    config["ray-gpu:worklods"] = "[]";
    const recorded = await setupPulumiMocks(config);
    await expect(import("../../stacks/index.js")).rejects.toThrow(
      'Pulumi.dev.yaml: 2 problems\n  ✖ ray-gpu:environment: must be one of "dev", "prod" (got "qa")\n  ✖ ' +
        'ray-gpu:worklods: unknown key; did you mean "workloads"? (got [])',
    );
    expect(recorded).toEqual([]);
  });
});
