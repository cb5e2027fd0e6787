import { GPU_INSTANCE_TYPES } from "../../../core/catalog/instances";
import { describe, expect, it } from "vitest";
import { configProblems, configWith, minimalConfig, repoStack } from "../../helpers/fixtures";

const problems = configProblems;

describe("stack config schema", () => {
  it("accepts the repo's dev and prod stacks", () => {
    expect(repoStack("dev").environment).toBe("dev");
    expect(repoStack("prod").platform.gpuNodeGroups.every((g) => g.capacityType === "on-demand")).toBe(true);
  });

  it("fills every default in one place", () => {
    const c = configWith(() => {});
    expect(c.platform.cpuNodeGroup).toEqual({ name: "system", instanceType: "m6i.2xlarge", minNodes: 2, maxNodes: 4 });
    expect(c.platform.gpuNodeGroups[0]).toMatchObject({
      minNodes: 0,
      capacityType: "on-demand",
      efa: false,
      rootVolumeGiB: 200,
    });
    expect(c.platform.gpuNodeGroups[0]!.clusterPlacementGroup).toBeUndefined();
    expect(c.platform.cluster).toEqual({
      mode: "create",
      name: "test",
      kubernetesVersion: "1.36",
      adminRoleArns: [],
      publicEndpoint: true,
      publicAccessCidrs: minimalConfig().platform.cluster["publicAccessCidrs"],
    });
    expect(c.platform.network).toEqual({ cidrBlock: "10.0.0.0/16" });
    expect(c.platform.storage).toEqual({ prefix: "", checkpointRetentionDays: 30 });
    expect(c.platform.security).toEqual({ httpsEgressCidrs: ["0.0.0.0/0"] });
    expect(c.workloads[0]).toMatchObject({
      strategy: "auto",
      precision: "bf16-mixed",
      optimizer: "adamw",
      env: {},
      secretEnv: {},
    });
  });

  it("adopts an existing cluster by name", () => {
    const c = configWith((x) => (x.platform.cluster = { mode: "existing", name: "shared-eks" }));
    expect(c.platform.cluster).toEqual({ mode: "existing", name: "shared-eks" });
  });

  it("lists every problem at once, with config path, value and rule", () => {
    const raw = minimalConfig();
    raw.environment = "staging";
    raw.platform.gpuNodeGroups[0]!["instanceType"] = "p4d.24xlarge";
    raw.platform.gpuNodeGroups[0]!["maxNode"] = 3;
    raw.workloads[0]!["gpuss"] = 4;
    raw.workloads[0]!["gpus"] = 0;
    expect(problems(raw)).toBe(
      [
        "Pulumi.test.yaml: 5 problems",
        '  ✖ ray-gpu:environment: must be one of "dev", "prod" (got "staging")',
        `  ✖ ray-gpu:platform.gpuNodeGroups[0].instanceType: must be one of ` +
          `${GPU_INSTANCE_TYPES.map((t) => `"${t}"`).join(", ")} (got "p4d.24xlarge")`,
        '  ✖ ray-gpu:platform.gpuNodeGroups[0].maxNode: unknown key; did you mean "maxNodes"? (got 3)',
        "  ✖ ray-gpu:workloads[0].gpus: must be >= 1 (got 0)",
        '  ✖ ray-gpu:workloads[0].gpuss: unknown key; did you mean "gpus"? (got 4)',
      ].join("\n"),
    );
  });

  it("reports a required key given under a near name once, on the misspelt key", () => {
    const raw = minimalConfig();
    const group = raw.platform.gpuNodeGroups[0]!;
    group["nmae"] = group["name"];
    delete group["name"];
    const msg = problems(raw);
    expect(msg).toContain("1 problem");
    expect(msg).toContain(
      '✖ ray-gpu:platform.gpuNodeGroups[0].nmae: unknown key; did you mean "name"? ("name" is required and missing)',
    );
  });

  it("reports a missing required key and an unknown namespace key", () => {
    const raw = minimalConfig();
    delete raw.region;
    raw["plaform"] = {};
    const msg = problems(raw);
    expect(msg).toContain("✖ ray-gpu:region: required; expected string (got (missing))");
    expect(msg).toContain('✖ ray-gpu:plaform: unknown key; did you mean "platform"? (got {})');
  });

  it("rejects an unknown workload kind with the allowed kinds", () => {
    const raw = minimalConfig();
    raw.workloads[0]!["kind"] = "Trainingjob";
    expect(problems(raw)).toContain(
      '✖ ray-gpu:workloads[0].kind: must be one of "TrainingJob", "LoRAFineTune", "EmbeddingPipeline", ' +
        '"BatchInference" (got "Trainingjob")',
    );
  });

  it("checks rules across fields: min <= max, unique names, spot only in dev, EFA only where it exists, zone in region", () => {
    const raw = minimalConfig();
    raw.environment = "prod";
    raw.platform.gpuNodeGroups.push({
      name: "a10g-4x",
      instanceType: "g5.2xlarge",
      minNodes: 5,
      maxNodes: 2,
      capacityType: "spot",
      efa: true,
      availabilityZone: "eu-west-1a",
    });
    const msg = problems(raw);
    expect(msg).toContain("✖ ray-gpu:platform.gpuNodeGroups[1].minNodes: minNodes (5) must be <= maxNodes (2)");
    expect(msg).toContain(
      '✖ ray-gpu:platform.gpuNodeGroups[1].name: pool name "a10g-4x" is used twice; pool names must be unique',
    );
    expect(msg).toContain("✖ ray-gpu:platform.gpuNodeGroups[1].capacityType: spot is allowed in dev only");
    expect(msg).toContain(
      "✖ ray-gpu:platform.gpuNodeGroups[1].efa: g5.2xlarge has no EFA interface; use an 8xlarge or larger size, or set efa: false",
    );
    expect(msg).toContain(
      '✖ ray-gpu:platform.gpuNodeGroups[1].availabilityZone: zone "eu-west-1a" is not in region us-east-1',
    );
  });

  it("keeps an EFA pool in one zone and one placement group, and says how", () => {
    const raw = minimalConfig();
    raw.platform.gpuNodeGroups.push(
      { name: "efa-nozone", instanceType: "g5.48xlarge", maxNodes: 4, efa: true },
      {
        name: "efa-nogroup",
        instanceType: "g5.48xlarge",
        maxNodes: 4,
        efa: true,
        availabilityZone: "us-east-1a",
        clusterPlacementGroup: false,
      },
    );
    const msg = problems(raw);
    expect(msg).toContain(
      "✖ ray-gpu:platform.gpuNodeGroups[1].availabilityZone: an EFA pool needs one: EFA's OS-bypass traffic does not " +
        "leave its subnet, so the pool's nodes must share one (the zone's first private subnet): set " +
        'availabilityZone, e.g. "us-east-1a"',
    );
    expect(msg).toContain(
      "✖ ray-gpu:platform.gpuNodeGroups[2].clusterPlacementGroup: an EFA pool's nodes launch in one cluster " +
        "placement group, so a job's workers are never split between groups: leave clusterPlacementGroup out or set it true",
    );
    expect(msg).not.toContain("gpuNodeGroups[2].availabilityZone: an EFA pool");
  });

  it("rejects RayJob names KubeRay would reject (DNS-1035, at most 47 characters)", () => {
    const raw = minimalConfig();
    raw.workloads.push({ ...raw.workloads[0], name: "x".repeat(48) }, { ...raw.workloads[0], name: "9train" });
    const msg = problems(raw);
    expect(msg).toContain("✖ ray-gpu:workloads[1].name: must not be longer than 47 characters");
    expect(msg).toContain(
      "✖ ray-gpu:workloads[2].name: must be lowercase letters, digits and '-', start with a letter and not end with '-' (got \"9train\")",
    );
  });
});
