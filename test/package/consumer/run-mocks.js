// Runs the program under Pulumi's mock runtime, the way the Pulumi CLI would load it, and checks what it registers.
//   node run-mocks.js compiled   -> the program compiled by plain tsc (bin/index.js)
//   node run-mocks.js ts-node    -> index.ts through ts-node, as the Pulumi CLI registers it for TypeScript projects
"use strict";
const assert = require("node:assert/strict");
const path = require("node:path");
const pulumi = require("@pulumi/pulumi");

const recorded = [];
const placeholders = (type, name) => {
  if (type === "awsx:ec2:Vpc")
    return { vpcId: `${name}-vpc`, privateSubnetIds: [`${name}-a`, `${name}-b`], publicSubnetIds: [`${name}-c`] };
  if (type === "aws:eks/cluster:Cluster")
    return { endpoint: "https://eks", certificateAuthority: { data: "ca" }, vpcConfig: { vpcId: "vpc" } };
  if (type === "aws:s3/bucket:Bucket") return { bucket: `${name}-bucket` };
  return {};
};
pulumi.runtime.setMocks(
  {
    newResource(args) {
      recorded.push({ type: args.type, name: args.name, inputs: args.inputs });
      return {
        id: `${args.name}-id`,
        state: { ...args.inputs, arn: `arn:aws:x:::${args.name}`, ...placeholders(args.type, args.name) },
      };
    },
    call(args) {
      return args.inputs;
    },
  },
  "consumer",
  "prod",
  true,
);

function loadThroughTsNode() {
  // The Pulumi CLI's nodejs runtime (@pulumi/pulumi cmd/run): the project's typescript and ts-node, else the vendored
  // ts-node 7.0.1, with the program's tsconfig.json and these defaults under it. Type checking stays on.
  const tsutils = require("@pulumi/pulumi/tsutils");
  const { tsnodeRequire, typescriptRequire } = tsutils.typeScriptRequireStrings();
  const compilerOptions = tsutils.loadTypeScriptCompilerOptions("tsconfig.json");
  require(tsnodeRequire).register({
    compiler: typescriptRequire,
    project: "tsconfig.json",
    skipProject: false,
    compilerOptions: {
      target: "ES2020",
      module: "nodenext",
      moduleResolution: "nodenext",
      sourceMap: "true",
      ...compilerOptions,
    },
  });
  require(path.resolve("index.ts"));
}

async function main() {
  const mode = process.argv[2];
  if (mode === "ts-node") loadThroughTsNode();
  else require(path.resolve("bin/index.js"));
  // Let every registration finish.
  for (let seen = -1; seen !== recorded.length;) {
    seen = recorded.length;
    await new Promise((r) => setTimeout(r, 300));
  }
  const of = (type) => recorded.filter((r) => r.type === type);
  const gpu = of("aws:eks/nodeGroup:NodeGroup").find((g) => g.inputs.amiType === "AL2023_x86_64_NVIDIA");
  assert.ok(gpu, "a GPU node group");
  assert.deepEqual(gpu.inputs.taints, [{ key: "nvidia.com/gpu", value: "true", effect: "NO_SCHEDULE" }]);
  const charts = of("kubernetes:helm.sh/v3:Release")
    .map((r) => `${r.inputs.chart}@${r.inputs.version}`)
    .sort();
  assert.ok(charts.filter((c) => c === "kuberay-operator@1.7.0").length === 2, `two KubeRay operators: ${charts}`);
  const jobs = of("kubernetes:ray.io/v1:RayJob").map((r) => r.inputs);
  assert.deepEqual(jobs.map((j) => j.metadata.name).sort(), ["embed-docs", "llama-ddp"]);
  const llama = jobs.find((j) => j.metadata.name === "llama-ddp");
  assert.equal(llama.spec.rayClusterSpec.workerGroupSpecs[0].replicas, 2);
  assert.equal(llama.metadata.namespace, "ray-jobs");
  console.log(
    JSON.stringify({ mode, resources: recorded.length, charts, jobs: jobs.map((j) => j.metadata.name).sort() }),
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
