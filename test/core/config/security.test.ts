import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../../core/config/stack";
import { secretLooking } from "../../../core/config/secrets";
import { configProblems, minimalConfig, type RawConfig } from "../../helpers/fixtures";

function problems(mutate: (c: RawConfig) => void): string {
  const raw = minimalConfig();
  mutate(raw);
  return configProblems(raw);
}

// Shaped like real tokens, valid for nothing.
const CANARY_HF = "hf_CanaryCanaryCanaryCanaryCanary1234";

describe("secret-looking plain variables", () => {
  it("refuses them in env and runtimeEnv.envVars, by value and by name, pointing at secretEnv and never echoing them", () => {
    const text = problems((c) => {
      c.workloads[0]!["env"] = { MY_SETTING: CANARY_HF, HF_TOKEN: "abc", TOKENIZERS_PARALLELISM: "false" };
      c.workloads[0]!["runtimeEnv"] = { envVars: { AWS_KEY_ID: "AKIAABCDEFGHIJKLMNOP" } };
    });
    expect(text).toContain("ray-gpu:workloads[0].env.MY_SETTING: its value holds a Hugging Face token");
    expect(text).toContain("ray-gpu:workloads[0].env.HF_TOKEN: its name says it holds a secret");
    expect(text).toContain("ray-gpu:workloads[0].runtimeEnv.envVars.AWS_KEY_ID: its value holds an AWS access key id");
    expect(text).toContain("move it to secretEnv");
    expect(text).toContain(`(got "<redacted>")`);
    expect(text).not.toContain(CANARY_HF);
    expect(text).not.toContain("AKIAABCDEFGHIJKLMNOP");
    expect(text).not.toContain("TOKENIZERS_PARALLELISM");
  });

  it("refuses a variable set both plainly and as a secret", () => {
    const text = problems((c) => {
      c.workloads[0]!["env"] = { DB_HOST: "db" };
      c.workloads[0]!["secretEnv"] = { DB_HOST: { secretName: "db", key: "host" } };
    });
    expect(text).toContain(
      "ray-gpu:workloads[0].secretEnv.DB_HOST: DB_HOST is also set in env: keep it in secretEnv only",
    );
  });

  it("finds credentials inside values and under any name: bearer, URL password, JWT, AWS secret key, a named key", () => {
    const values: Record<string, string> = {
      AUTH_HEADER: `Bearer ${CANARY_HF}`,
      DB_URL: "postgres://admin:Canary-pass-1@db:5432/app",
      SESSION: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.Q2FuYXJ5Q2FuYXJ5Q2FuYXJ5",
      MY_AWS: "CanaryCanaryCanary/CanaryCanary+Canary12",
      WANDB_KEY: "0123456789abcdef0123456789abcdef01234567",
    };
    const text = problems((c) => {
      c.workloads[0]!["env"] = values;
    });
    for (const [name, why] of Object.entries({
      AUTH_HEADER: "holds a Hugging Face token",
      DB_URL: "holds a URL with a password",
      SESSION: "holds a JSON Web Token",
      MY_AWS: "looks like an AWS secret access key",
      WANDB_KEY: "its name says it is a key, and its value looks like one",
    }))
      expect(text).toContain(`ray-gpu:workloads[0].env.${name}: ${name === "WANDB_KEY" ? "" : "its value "}${why}`);
    for (const value of Object.values(values)) expect(text).not.toContain(value);
  });

  it("refuses a secret on the entrypoint's command line, and accepts one passed as a variable", () => {
    for (const entrypoint of [
      `python train.py --hf-token ${CANARY_HF}`,
      "python train.py --api-key=Canary123",
      "curl -H 'Authorization: Bearer CanaryCanaryCanary12' https://x && python run.py",
      "python run.py --db postgres://u:Canary-pw@db/app",
    ]) {
      const text = problems((c) => {
        c.workloads[0]!["entrypoint"] = entrypoint;
      });
      expect(text, entrypoint).toMatch(/ray-gpu:workloads\[0\]\.entrypoint: it (holds|gives)/);
      expect(text, entrypoint).toContain("pass it as an environment variable");
      expect(text, entrypoint).not.toContain("Canary");
    }
    for (const entrypoint of [
      "python train.py --hf-token $HF_TOKEN",
      "python x.py --max-tokens 512 --tokenizer fast",
    ]) {
      const raw = minimalConfig();
      raw.workloads[0]!["entrypoint"] = entrypoint;
      expect(() => parseStackConfig(raw), entrypoint).not.toThrow();
    }
  });

  it("tells secret names from look-alikes", () => {
    for (const name of ["HF_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GITHUB_AUTH_TOKEN"])
      expect(secretLooking(name, "x"), name).toBeDefined();
    for (const name of ["TOKENIZERS_PARALLELISM", "HF_HUB_OFFLINE", "AUTHOR", "MAX_TOKENS"])
      expect(secretLooking(name, "x"), name).toBeUndefined();
    expect(secretLooking("GIT_SHA", "0123456789abcdef0123456789abcdef01234567")).toBeUndefined();
    expect(secretLooking("CACHE_KEY", "v1")).toBeUndefined();
    expect(secretLooking("MODEL_PATH", "/workspace/MyProjectName/Checkpoints/Run1")).toBeUndefined();
    expect(secretLooking("DOCS_URL", "https://example.com/a?b=1")).toBeUndefined();
  });
});

describe("the prod API endpoint", () => {
  it("is refused open to every address, with the fix", () => {
    const text = problems((c) => {
      c.environment = "prod";
      c.platform.cluster = { mode: "create", name: "test" };
    });
    expect(text).toContain(
      "ray-gpu:platform.cluster.publicAccessCidrs: a prod API endpoint open to 3,702,390,784 public addresses (100.0% of the internet",
    );
    expect(text).toContain("or set publicEndpoint: false");
  });

  it("is accepted narrowed, or private; dev may leave it open", () => {
    for (const cluster of [
      { mode: "create", name: "test", publicAccessCidrs: ["44.192.0.0/24"] },
      { mode: "create", name: "test", publicEndpoint: false },
    ]) {
      const raw = minimalConfig();
      raw.environment = "prod";
      raw.platform.cluster = cluster;
      expect(() => parseStackConfig(raw)).not.toThrow();
    }
    const dev = minimalConfig();
    dev.platform.cluster = { mode: "create", name: "test" };
    expect(parseStackConfig(dev).platform.cluster).toMatchObject({ publicAccessCidrs: ["0.0.0.0/0"] });
  });
});
