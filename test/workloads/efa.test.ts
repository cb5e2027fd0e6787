/**
 * A job on an EFA pool: its workers take EFA only when they cross nodes, and an image that cannot carry NCCL over EFA
 * (the Ray project's, which have no aws-ofi-nccl) is refused at `image` with the way out.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../core/errors";
import { planStack } from "../../workloads/stack";
import { configWith, runtime } from "../helpers/fixtures";

/** A stack with one EFA pool of g5.12xlarge and a training job of `gpus` GPUs on `image`. */
const efaStack = (gpus: number, image: string) =>
  configWith((c) => {
    c.platform.gpuNodeGroups = [
      { name: "efa", instanceType: "g5.12xlarge", maxNodes: 4, efa: true, availabilityZone: "us-east-1a" },
    ];
    c.platform["network"] = { availabilityZoneNames: ["us-east-1a", "us-east-1b"] };
    Object.assign(c.workloads[0]!, { gpus, image, entrypoint: "python train.py", nodePool: "efa" });
  });

const problems = (gpus: number, image: string) => {
  try {
    planStack(efaStack(gpus, image), { runtime });
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.issues.map((i) => `${i.path}: ${i.message}`);
  }
};

describe("an EFA pool's jobs", () => {
  it("refuse a Ray project image when the workers cross nodes, naming the image to build", () => {
    const [only, ...more] = problems(8, "rayproject/ray:2.58.0-py311-gpu");
    expect(more).toEqual([]);
    expect(only).toMatch(
      /^ray-gpu:workloads\[0\]\.image: is a Ray project image, which has no libfabric and no aws-ofi-nccl/,
    );
    expect(only).toContain("images/train/Dockerfile");
    expect(only).toMatch(/or run the job on a pool with efa: false$/);
  });

  it("take a Ray project image on one node, and any image of your own across nodes", () => {
    expect(problems(4, "rayproject/ray:2.58.0-py311-gpu")).toEqual([]);
    expect(problems(8, "123456789012.dkr.ecr.us-east-1.amazonaws.com/ray-gpu/train:2.58.0-py311-gpu")).toEqual([]);
  });
});
