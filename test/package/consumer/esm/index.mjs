// An ES-module consumer: named imports from the package, a plan and a rendered job, and a component under mocks.
import assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import {
  KubeRayOperator,
  RAY_VERSION,
  TrainingJob,
  loadRuntimePackage,
  parsePlatformConfig,
  planPools,
} from "pulumi-ray-gpu";
import { planStack } from "pulumi-ray-gpu/workloads";
import { parseStackConfig } from "pulumi-ray-gpu/core";

const pools = planPools(
  parsePlatformConfig({
    cluster: { mode: "existing", name: "e" },
    gpuNodeGroups: [{ name: "g", instanceType: "g5.12xlarge", maxNodes: 2 }],
  }),
);
const objects = new TrainingJob({
  kind: "TrainingJob",
  name: "esm",
  model: "meta-llama/Llama-3.2-1B",
  image: "my/image:1",
  entrypoint: "python train.py",
  gpus: 8,
}).render({ environment: "prod", pools, namespace: "ray-jobs", runtime: loadRuntimePackage() });
const job = objects.find((o) => o.kind === "RayJob");
assert.equal(job.spec.rayClusterSpec.rayVersion, RAY_VERSION);
assert.equal(typeof planStack, "function");
assert.equal(typeof parseStackConfig, "function");

const types = [];
pulumi.runtime.setMocks(
  { newResource: (a) => (types.push(a.type), { id: `${a.name}-id`, state: a.inputs }), call: (a) => a.inputs },
  "esm",
  "dev",
  true,
);
new KubeRayOperator("kuberay");
await new Promise((r) => setTimeout(r, 500));
assert.ok(types.includes("kubernetes:helm.sh/v3:Release"), types.join(", "));
console.log(JSON.stringify({ mode: "esm", kinds: objects.map((o) => o.kind), types }));
