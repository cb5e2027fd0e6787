/** Good and bad KubeRay inputs for `no-plaintext-secret-env`: every field that reaches a pod, beyond env values. */
import { edited, type BadCase, type GoodCase } from "./fixtures";
import { objects, podCase } from "./ray";

const ENV = "no-plaintext-secret-env";
const TOKEN = "hf_abcdefghijklmnopqrstuvwxyz";

export const SECRET_BAD_CASES: readonly BadCase[] = [
  {
    variant: "RayJob entrypoint with a token flag",
    rule: ENV,
    input: edited(objects.RayJob, (p) => (p.spec.entrypoint = "python train.py --wandb-api-key abc123def456")),
    path: "spec.entrypoint",
  },
  {
    variant: "RayJob runtimeEnvYAML env_vars with a secret",
    rule: ENV,
    input: edited(
      objects.RayJob,
      (p) => (p.spec.runtimeEnvYAML = "env_vars:\n  OMP_NUM_THREADS: '4'\n  DB_PASSWORD: hunter2\n"),
    ),
    path: "spec.runtimeEnvYAML (env_vars.DB_PASSWORD)",
  },
  {
    variant: "RayJob runtimeEnvYAML pip URL with a password",
    rule: ENV,
    input: edited(
      objects.RayJob,
      (p) => (p.spec.runtimeEnvYAML = "pip:\n  - git+https://bot:s3cret@github.com/acme/lib.git\n"),
    ),
    path: "spec.runtimeEnvYAML (pip[0])",
  },
  {
    variant: "RayJob runtimeEnvYAML that is not YAML, holding a token",
    rule: ENV,
    input: edited(objects.RayJob, (p) => (p.spec.runtimeEnvYAML = `env_vars: {HF: ${TOKEN}`)),
    path: "spec.runtimeEnvYAML",
  },
  {
    variant: "RayService serveConfigV2 env_vars with a token",
    rule: ENV,
    input: edited(
      objects.RayService,
      (p) =>
        (p.spec.serveConfigV2 = `applications:\n  - name: llm\n    runtime_env:\n      env_vars:\n        HF_TOKEN: ${TOKEN}\n`),
    ),
    path: "spec.serveConfigV2 (applications[0].runtime_env.env_vars.HF_TOKEN)",
  },
  podCase(
    ["envFrom a ConfigMap named as a secret", ENV],
    ["RayCluster", "head"],
    (pod) => (pod.containers[0].envFrom = [{ configMapRef: { name: "hf-token" } }]),
    "containers[0].envFrom[0].configMapRef",
  ),
  podCase(
    ["secret-named variable from a ConfigMap", ENV],
    ["RayJob", "worker"],
    (pod) =>
      (pod.containers[0].env = [{ name: "HF_TOKEN", valueFrom: { configMapKeyRef: { name: "cfg", key: "t" } } }]),
    "containers[0].env[0].valueFrom.configMapKeyRef",
  ),
  podCase(
    ["token in args", ENV],
    ["RayJob", "submitter"],
    (pod) => (pod.containers[0].args = ["--hf-token", "abc"]),
    "containers[0].args",
  ),
  podCase(
    ["token in a bash -c script", ENV],
    ["RayService", "worker"],
    (pod) => (pod.containers[0].command = ["bash", "-c", "python serve.py --api-key abc"]),
    "containers[0].command",
  ),
];

export const SECRET_GOOD_CASES: readonly GoodCase[] = [
  {
    name: "secrets passed as variables; runtime env, envFrom and args without secrets",
    rules: [ENV],
    input: edited(objects.RayJob, (p) => {
      p.spec.entrypoint = "python train.py --hf-token $HF_TOKEN";
      p.spec.runtimeEnvYAML =
        "env_vars:\n  OMP_NUM_THREADS: '4'\n  TOKENIZERS_PARALLELISM: 'false'\npip:\n  - torch==2.5.1\n";
      const c = p.spec.rayClusterSpec.headGroupSpec.template.spec.containers[0];
      c.envFrom = [{ configMapRef: { name: "llm-pretrain-tuning" } }, { secretRef: { name: "hf-token" } }];
      c.args = ["--epochs", "3"];
    }),
  },
];
