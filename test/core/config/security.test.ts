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
    expect(text).toContain("ray-gpu:workloads[0].env.MY_SETTING: its value looks like a Hugging Face token");
    expect(text).toContain("ray-gpu:workloads[0].env.HF_TOKEN: its name says it holds a secret");
    expect(text).toContain(
      "ray-gpu:workloads[0].runtimeEnv.envVars.AWS_KEY_ID: its value looks like a AWS access key id",
    );
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

  it("tells secret names from look-alikes", () => {
    for (const name of ["HF_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GITHUB_AUTH_TOKEN"])
      expect(secretLooking(name, "x"), name).toBeDefined();
    for (const name of ["TOKENIZERS_PARALLELISM", "HF_HUB_OFFLINE", "AUTHOR", "MAX_TOKENS"])
      expect(secretLooking(name, "x"), name).toBeUndefined();
    expect(secretLooking("GIT_SHA", "0123456789abcdef0123456789abcdef01234567")).toBeUndefined();
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
      { mode: "create", name: "test", publicAccessCidrs: ["198.51.100.0/24"] },
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
