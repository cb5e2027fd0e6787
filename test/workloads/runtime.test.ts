import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../core/errors";
import { RAY_IMAGE, RAY_VERSION, rayImageProblem } from "../../core/ray";
import { planPools } from "../../core/pools";
import { planStack } from "../../workloads/stack";
import { TrainingJob } from "../../workloads/workload";
import type { ConfigMap, KubeObject, RayJob } from "../../workloads/k8s/types";
import { RUNTIME_PYTHONPATH, runtimeConfigMapName } from "../../workloads/contract/configmaps";
import { runtimePackageDir } from "../../io/runtime-package";
import { loadWorkloadFile, standaloneStack } from "../../cli/input/workload-file";
import { repoRoot, repoStack, runtime } from "../helpers/fixtures";

const byKind = <K extends KubeObject["kind"]>(objects: readonly KubeObject[], kind: K) =>
  objects.filter((o) => o.kind === kind) as Extract<KubeObject, { kind: K }>[];

/** Every rendered workload of the repo: both stacks and the example workload files. */
function allRendered() {
  const stacks = (["dev", "prod"] as const).flatMap((env) => planStack(repoStack(env), { runtime }).objects);
  const files = readdirSync(join(repoRoot, "examples/workloads")).map((f) => {
    const spec = loadWorkloadFile(join(repoRoot, "examples/workloads", f));
    return planStack(standaloneStack(spec, "dev"), { runtime }).objects;
  });
  return [...stacks, ...files.flat()];
}

describe("runtime package in every RayJob", () => {
  const plan = planStack(repoStack("dev"), { runtime });
  const { objects } = plan.objects[0]!;
  // The namespace's ConfigMaps: the runtime package's (and, in the monitoring namespace, the jobs dashboard).
  const runtimeCm = byKind(plan.shared, "ConfigMap").find((c) => c.metadata.namespace === "ray-jobs") as ConfigMap;
  const job = byKind(objects, "RayJob")[0] as RayJob;

  it("ships it once per namespace, content-addressed, and every job of the stack mounts that one ConfigMap", () => {
    expect(byKind(plan.shared, "ConfigMap").filter((c) => c.metadata.namespace === "ray-jobs")).toHaveLength(1);
    expect(runtimeCm.metadata).toMatchObject({
      namespace: "ray-jobs",
      name: expect.stringMatching(/^ray-gpu-runtime-[0-9a-f]{10}$/),
    });
    for (const { objects: o } of plan.objects) {
      expect(byKind(o, "ConfigMap").map((c) => c.metadata.name)).not.toContain(runtimeCm.metadata.name);
      const volumes = byKind(o, "RayJob")[0]!.spec.rayClusterSpec.headGroupSpec.template.spec.volumes!;
      expect(volumes.find((v) => v.name === "ray-gpu-runtime")!.configMap!.name).toBe(runtimeCm.metadata.name);
    }
    // A changed package is a new ConfigMap, never a change under running jobs.
    const changed = { files: { ...runtime.files, "tuning.py": `${runtime.files["tuning.py"]}\n# changed\n` } };
    expect(runtimeConfigMapName(changed)).not.toBe(runtimeCm.metadata.name);
    expect(runtimeConfigMapName({ files: { ...runtime.files } })).toBe(runtimeCm.metadata.name);
  });

  it("ships every file of runtime/ray_gpu (Python and the contract's schema) byte for byte, laid out as the package tree", () => {
    const files = runtime.files;
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining([
        "__init__.py",
        "contract.py",
        "tuning.py",
        "tuning.schema.json",
        "examples/train.py",
        "examples/embed.py",
        "examples/sft.py",
        "examples/infer.py",
      ]),
    );
    const volume = job.spec.rayClusterSpec.headGroupSpec.template.spec.volumes!.find(
      (v) => v.name === "ray-gpu-runtime",
    )!;
    const laidOut = Object.fromEntries(volume.configMap!.items!.map((i) => [i.path, runtimeCm.data[i.key]]));
    expect(laidOut).toEqual(files);
    expect(readFileSync(join(runtimePackageDir(), "tuning.py"), "utf8")).toBe(files["tuning.py"]);
    // Kubernetes keeps a ConfigMap in one etcd value of at most 1 MiB.
    expect(Object.values(runtimeCm.data).reduce((n, v) => n + Buffer.byteLength(v), 0)).toBeLessThan(512 * 1024);
  });

  it("mounts it on the head (driver) and every worker and puts it on PYTHONPATH", () => {
    const pods = [
      job.spec.rayClusterSpec.headGroupSpec.template.spec,
      ...job.spec.rayClusterSpec.workerGroupSpecs.map((w) => w.template.spec),
    ];
    for (const pod of pods) {
      const c = pod.containers[0]!;
      expect(c.volumeMounts).toContainEqual({
        name: "ray-gpu-runtime",
        mountPath: `${RUNTIME_PYTHONPATH}/ray_gpu`,
        readOnly: true,
      });
      expect(c.env).toContainEqual({ name: "PYTHONPATH", value: RUNTIME_PYTHONPATH });
    }
  });

  it("keeps a user's PYTHONPATH first", () => {
    const dev = repoStack("dev");
    const ctx = { environment: "dev" as const, pools: planPools(dev.platform), namespace: "ray-jobs", runtime };
    const spec = {
      kind: "TrainingJob" as const,
      name: "t",
      model: "Qwen/Qwen2.5-0.5B",
      image: RAY_IMAGE,
      entrypoint: "python x.py",
      gpus: 1,
      nodePool: "a10g-1x",
      env: { PYTHONPATH: "/app" },
    };
    const rendered = byKind(new TrainingJob(spec).render(ctx), "RayJob")[0]!;
    expect(rendered.spec.rayClusterSpec.workerGroupSpecs[0]!.template.spec.containers[0]!.env).toContainEqual({
      name: "PYTHONPATH",
      value: `/app:${RUNTIME_PYTHONPATH}`,
    });
  });
});

describe("Ray version pin", () => {
  it("matches the Ray the runtime is tested with (runtime/requirements.txt) and every repo image", () => {
    const requirements = readFileSync(join(repoRoot, "runtime/requirements.txt"), "utf8");
    expect(requirements).toMatch(new RegExp(`^ray\\[[a-z,]+\\]==${RAY_VERSION.replaceAll(".", "\\.")}$`, "m"));
    for (const { objects } of allRendered())
      for (const job of byKind(objects, "RayJob")) expect(job.spec.rayClusterSpec.rayVersion).toBe(RAY_VERSION);
  });

  it("rejects Ray's own images of another version, with the image's config path", () => {
    expect(rayImageProblem(RAY_IMAGE)).toBeUndefined();
    expect(rayImageProblem("123456789012.dkr.ecr.us-east-1.amazonaws.com/team/trainer:3")).toBeUndefined();
    expect(rayImageProblem("rayproject/ray:latest")).toContain('tag "latest"');
    expect(rayImageProblem("docker.io/rayproject/ray")).toContain('tag "latest"');
    expect(rayImageProblem("rayproject/ray@sha256:0123")).toBeUndefined();
    const old = {
      kind: "TrainingJob",
      name: "t",
      model: "Qwen/Qwen2.5-0.5B",
      image: "rayproject/ray:2.41.0-py311-gpu",
      entrypoint: "x",
      gpus: 1,
    };
    expect(() => new TrainingJob(old as never)).toThrow(ConfigError);
    expect(() => new TrainingJob(old as never)).toThrow(
      `image: Ray images must be Ray ${RAY_VERSION}, the version the RayJob declares and the runtime library is ` +
        'tested with (tag "2.41.0-py311-gpu")',
    );
  });
});

describe("runtime environment (runtimeEnvYAML)", () => {
  const dev = repoStack("dev");
  const ctx = { environment: "dev" as const, pools: planPools(dev.platform), namespace: "ray-jobs", runtime };
  const base = {
    kind: "TrainingJob" as const,
    name: "t",
    model: "Qwen/Qwen2.5-0.5B",
    image: RAY_IMAGE,
    entrypoint: "python -m ray_gpu.examples.train",
    gpus: 1,
    nodePool: "a10g-1x",
  };

  it("renders pip requirements and variables in Ray's field names, byte-stable", () => {
    const job = byKind(
      new TrainingJob({
        ...base,
        runtimeEnv: { pip: ["torch==2.13.0", "peft==0.21.0"], envVars: { WANDB_MODE: "offline", HF_HUB_OFFLINE: "1" } },
      }).render(ctx),
      "RayJob",
    )[0]!;
    expect(job.spec.runtimeEnvYAML).toBe(
      'env_vars:\n  HF_HUB_OFFLINE: "1"\n  WANDB_MODE: offline\npip:\n  - torch==2.13.0\n  - peft==0.21.0\n',
    );
    expect(byKind(new TrainingJob(base).render(ctx), "RayJob")[0]!.spec).not.toHaveProperty("runtimeEnvYAML");
    expect(() => new TrainingJob({ ...base, runtimeEnv: { envVars: { PYTHONPATH: "/app" } } })).toThrow(
      "runtimeEnv.envVars.PYTHONPATH: would replace the path to the runtime library",
    );
  });

  it("rejects unpinned packages, reserved variables and unknown fields, each with its path", () => {
    expect(
      () =>
        new TrainingJob({
          ...base,
          runtimeEnv: { pip: ["torch"], envVars: { RAY_GPU_MICRO_BATCH_SIZE: "1" }, workingDir: "s3://x" },
        } as never),
    ).toThrow(
      [
        "3 problems",
        '  ✖ TrainingJob "t".runtimeEnv.pip[0]: must pin one exact version, such as torch==2.13.0, optionally ' +
          "followed by --hash=sha256:<64 lowercase hex digits> (or sha384, sha512) options: pip resolves a range " +
          "or a wildcard (>=, >, ~=, ==*) to whatever is newest at each job start, so two runs of one plan could " +
          'install different packages (got "torch")',
        '  ✖ TrainingJob "t".runtimeEnv.envVars.RAY_GPU_MICRO_BATCH_SIZE: RAY_GPU_* is set by pulumi-ray-gpu ' +
          '(the tuned values) on every Ray container (docs/runtime.md); choose another name (got "1")',
        '  ✖ TrainingJob "t".runtimeEnv.workingDir: unknown key; allowed keys are pip, envVars (got "s3://x")',
      ].join("\n"),
    );
  });
});
