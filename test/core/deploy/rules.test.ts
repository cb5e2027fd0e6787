import { describe, expect, it } from "vitest";
import { checkNames, nameOverflow } from "../../../core/deploy/names";
import { checkPlacement } from "../../../core/deploy/placement";
import { checkProgram } from "../../../core/deploy/program";
import { deployNode } from "../../helpers/deploy-graph";

const node = deployNode;
const RELEASE = "kubernetes:helm.sh/v3:Release";

describe("name limits", () => {
  it("refuses a Helm release whose made name passes Helm's 53 characters, and says how long a name fits", () => {
    const long = node(RELEASE, "ray-gpu-pf-observability-dcgm-exporter-release"); // 46 + 9 = 55
    const [problem] = checkNames([long, node(RELEASE, "ray-gpu-observability-dcgm-exporter-release")]);
    expect(problem!.resource).toBe(long.name);
    expect(problem!.message).toContain("55 characters, but a Helm release name is at most 53");
    expect(problem!.message).toContain("keep the resource name to 44 characters");
    expect(nameOverflow(long)).toBe(2);
    expect(checkNames([node(RELEASE, long.name, { inputs: { name: "dcgm" } })])).toEqual([]);
  });

  it("checks given names and prefixes: IAM role 64 and prefix 38, node group prefix 37, RayJob 47, label values 63", () => {
    const problems = checkNames([
      node("aws:iam/role:Role", "r", { inputs: { namePrefix: "x".repeat(39) } }),
      node("aws:iam/role:Role", "y".repeat(57)), // made: 57 + 8 = 65
      node("aws:eks/nodeGroup:NodeGroup", "ng", { inputs: { nodeGroupNamePrefix: "p".repeat(38) } }),
      node("kubernetes:ray.io/v1:RayJob", "job", { inputs: { metadata: { name: "j".repeat(48) } } }),
      node("kubernetes:core/v1:ConfigMap", "cm", {
        inputs: { metadata: { name: "ok", labels: { a: "v".repeat(64) } } },
      }),
      node("aws:iam/role:Role", "fits", { inputs: { name: "z".repeat(64) } }),
    ]);
    expect(problems.map((p) => p.resource)).toEqual(["r", "y".repeat(57), "ng", "job", "cm"]);
    expect(problems[0]!.message).toContain("an IAM role name prefix (26 characters are added) is at most 38");
    expect(problems[3]!.message).toContain("a RayJob name is at most 47");
  });
});

describe("Ray pod placement", () => {
  const group = (name: string, labels: Record<string, string>, taints: unknown[] = []) =>
    node("aws:eks/nodeGroup:NodeGroup", name, { inputs: { labels, taints, instanceTypes: ["g5.2xlarge"] } });
  const job = (pool: string, tolerations: unknown[]) =>
    node("kubernetes:ray.io/v1:RayJob", "job", {
      inputs: {
        spec: {
          rayClusterSpec: {
            headGroupSpec: { template: { spec: { nodeSelector: { "ray-gpu.io/pool": "system" } } } },
            workerGroupSpecs: [
              { groupName: "gpu", template: { spec: { nodeSelector: { "ray-gpu.io/pool": pool }, tolerations } } },
            ],
          },
        },
      },
    });
  const gpuTaint = { key: "nvidia.com/gpu", value: "true", effect: "NO_SCHEDULE" };
  const tolerates = [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }];
  const groups = [
    group("system-ng", { "ray-gpu.io/pool": "system" }),
    group("a10g-ng", { "ray-gpu.io/pool": "a10g" }, [gpuTaint]),
  ];

  it("passes pods whose selector and tolerations fit a node group", () => {
    expect(checkPlacement([...groups, job("a10g", tolerates)])).toEqual([]);
  });

  it("refuses workers rendered against another config's pools, and workers that do not tolerate the GPU taint", () => {
    const [other] = checkPlacement([...groups, job("other", tolerates)]);
    expect(other!.message).toMatch(/worker group gpu's pods can land on no node group.*ray-gpu.io\/pool=other/);
    const [untolerated] = checkPlacement([...groups, job("a10g", [])]);
    expect(untolerated!.message).toContain("a10g-ng: does not tolerate nvidia.com/gpu:NoSchedule");
  });

  it("says nothing where the program makes no node group (a cluster someone else runs)", () => {
    expect(checkPlacement([job("other", [])])).toEqual([]);
  });
});

describe("checkProgram", () => {
  it("leaves releases alone on a cluster the program does not make, and refuses them where it makes the nodes", () => {
    const release = node(RELEASE, "kuberay-release", { inputs: { chart: "kuberay-operator" } });
    expect(checkProgram([release])).toEqual([]);
    const withNodes = [node("aws:eks/cluster:Cluster", "eks"), release];
    expect(checkProgram(withNodes).map((p) => p.resource)).toEqual(["kuberay-release"]);
  });

  it("passes a custom resource that waits for any release of its chart", () => {
    const r = (name: string) => node(RELEASE, name, { inputs: { chart: "kuberay-operator" } });
    const job = node("kubernetes:ray.io/v1:RayJob", "job", { dependsOn: ["b"] });
    expect(checkProgram([r("a"), r("b"), job])).toEqual([]);
    expect(checkProgram([r("a"), r("b"), { ...job, dependsOn: [] }])[0]!.message).toContain("wait for a or b");
  });
});

describe("Ray pod placement: EFA and hugepages", () => {
  const LT = "aws:ec2/launchTemplate:LaunchTemplate";
  const template = (name: string, efa: boolean, hugepages: boolean) =>
    node(LT, name, {
      inputs: {
        ...(efa ? { networkInterfaces: [{ deviceIndex: 0, interfaceType: "efa" }] } : {}),
        userData: Buffer.from(hugepages ? "#!/bin/bash\nsysctl -w vm.nr_hugepages=5128\n" : "").toString("base64"),
      },
    });
  const group = (name: string, lt: string) =>
    node("aws:eks/nodeGroup:NodeGroup", name, {
      dependsOn: [lt],
      inputs: { labels: { "ray-gpu.io/pool": "efa" }, instanceTypes: ["g5.48xlarge"] },
    });
  const plugin = node(RELEASE, "efa-plugin", { inputs: { chart: "aws-efa-k8s-device-plugin" } });
  const efaJob = node("kubernetes:ray.io/v1:RayJob", "job", {
    inputs: {
      spec: {
        rayClusterSpec: {
          workerGroupSpecs: [
            {
              groupName: "gpu",
              template: {
                spec: {
                  nodeSelector: { "ray-gpu.io/pool": "efa" },
                  containers: [
                    { resources: { requests: { "vpc.amazonaws.com/efa": "1", "hugepages-2Mi": "5120Mi" } } },
                  ],
                },
              },
            },
          ],
        },
      },
    },
  });

  it("lands EFA workers on a group whose template attaches EFA and reserves hugepages, with the device plugin", () => {
    expect(checkPlacement([template("lt", true, true), group("ng", "lt"), plugin, efaJob])).toEqual([]);
  });

  it("refuses them without the device plugin, the EFA interface or the hugepages, saying which", () => {
    const noPlugin = checkPlacement([template("lt", true, true), group("ng", "lt"), efaJob]);
    expect(noPlugin[0]!.message).toContain("ng: requests vpc.amazonaws.com/efa, but no EFA device plugin");
    const plain = checkPlacement([template("lt", false, false), group("ng", "lt"), plugin, efaJob]);
    expect(plain[0]!.message).toContain(
      "ng: requests vpc.amazonaws.com/efa, but its launch template attaches no EFA interface, and requests " +
        "hugepages-2Mi, but its user data reserves no hugepages (vm.nr_hugepages)",
    );
  });

  it("lands a worker that requests neither on any group its selector matches", () => {
    const worker = {
      spec: { nodeSelector: { "ray-gpu.io/pool": "efa" }, containers: [{ resources: { requests: { cpu: "4" } } }] },
    };
    const plainJob = { ...efaJob, inputs: { spec: { rayClusterSpec: { workerGroupSpecs: [{ template: worker }] } } } };
    expect(checkPlacement([template("lt", false, false), group("ng", "lt"), plainJob])).toEqual([]);
    expect(checkPlacement([template("lt", false, false), group("ng", "lt"), efaJob])).toHaveLength(1);
  });
});
