/**
 * Example: add an A10G pool, the NVIDIA device plugin and the KubeRay operator to a stack that already has an EKS
 * cluster. Copy into your own Pulumi program as it is (it imports the package by name); replace the inputs at the top
 * with your cluster's. (Run under Pulumi's mocks in test/components/import-example.test.ts.)
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  GpuNodeGroup,
  KubeRayOperator,
  NvidiaDevicePlugin,
  parsePlatformConfig,
  planGpuNodeGroup,
  planPools,
} from "pulumi-ray-gpu";

// Your cluster's values (from your own stack, e.g. `new pulumi.StackReference(...)`).
const clusterName = "my-eks";
const nodeRoleArn = pulumi.output("arn:aws:iam::123456789012:role/my-eks-nodes");
const privateSubnetIds = pulumi.output(["subnet-0a", "subnet-0b"]);
const vpcId = pulumi.output("vpc-0123");
const provider = new k8s.Provider("my-eks", { kubeconfig: process.env["KUBECONFIG"] ?? "~/.kube/config" });

const platform = parsePlatformConfig({
  cluster: { mode: "existing", name: clusterName },
  cpuNodeGroup: { name: "system" },
  gpuNodeGroups: [{ name: "a10g-4x", instanceType: "g5.12xlarge", maxNodes: 4 }],
});
const pool = planPools(platform).gpu[0]!;

export const gpuPool = new GpuNodeGroup("a10g-4x", {
  plan: planGpuNodeGroup(pool, { clusterName, environment: "prod" }),
  clusterName,
  nodeRoleArn,
  subnetIds: privateSubnetIds,
  vpcId,
});
// The NVIDIA AMI has the driver, not the device plugin; without it no pod can request nvidia.com/gpu.
export const devicePlugin = new NvidiaDevicePlugin("nvidia-device-plugin", {}, { provider });
// No CPU pool selector: an existing cluster's nodes do not carry ray-gpu.io/pool labels.
export const kuberay = new KubeRayOperator("kuberay", {}, { provider });
// A pool with minNodes 0 also needs a Cluster Autoscaler that discovers it (ClusterAutoscaler, or your own).
