/**
 * A job's pip requirements: the grammar of one (a pinned project and pip's hash options), all hashed or none in every
 * environment, and none unhashed in prod, each refusal at its config path. What pip then does with them is
 * test/workloads/rayjob/pip-hashes.test.ts's.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PIP_REQUIREMENT, pipVerification, pipVersion } from "../../../core/config/pip";
import { TrainingJob } from "../../../workloads";
import { configProblems, minimalConfig, type RawConfig } from "../../helpers/fixtures";

const SHA256 = "a".repeat(64);
const hashed = (r: string) => `${r} --hash=sha256:${SHA256}`;
const withPip = (environment: string, pip: string[]): RawConfig => {
  const c = minimalConfig();
  c.environment = environment;
  if (environment === "prod") c.platform.cluster["publicEndpoint"] = false;
  c.platform.cluster["publicAccessCidrs"] = environment === "prod" ? undefined : ["44.192.0.0/24"];
  c.workloads[0]!["runtimeEnv"] = { pip };
  return c;
};

describe("pip requirements", () => {
  it("accepts a pinned project with any number of sha256, sha384 or sha512 hashes", () => {
    for (const r of [
      "torch==2.13.0",
      "torch===2.13.0+cu121",
      "transformers[torch] == 5.18.0",
      hashed("peft==0.21.0"),
      `peft==0.21.0 --hash=sha256:${SHA256}   --hash=sha384:${"b".repeat(96)} --hash=sha512:${"c".repeat(128)}`,
    ])
      expect(PIP_REQUIREMENT.test(r), r).toBe(true);
  });

  it("takes a hash only as pip's option with a lowercase digest of its algorithm's length", () => {
    const hex = fc.stringMatching(/^[0-9a-f]{1,130}$/);
    fc.assert(
      fc.property(fc.constantFrom("sha256", "sha384", "sha512", "md5", "sha1"), hex, (alg, digest) => {
        const digits: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };
        const valid = digits[alg] === digest.length;
        expect(PIP_REQUIREMENT.test(`six==1.17.0 --hash=${alg}:${digest}`)).toBe(valid);
      }),
    );
    expect(PIP_REQUIREMENT.test(`six==1.17.0 --hash=sha256:${"A".repeat(64)}`)).toBe(false);
    expect(PIP_REQUIREMENT.test(`six==1.17.0 --hash sha256:${SHA256}`)).toBe(false);
    expect(PIP_REQUIREMENT.test(`six==1.17.0 --index-url=https://example.com`)).toBe(false);
  });

  it("reads the version and the verification of a list", () => {
    expect(pipVersion(hashed("transformers==5.18.0"))).toBe("5.18.0");
    expect(pipVerification(undefined)).toBe("none");
    expect(pipVerification(["six==1.17.0"])).toBe("unverified");
    expect(pipVerification([hashed("six==1.17.0"), hashed("idna==3.20")])).toBe("hash-checked");
  });

  it("refuses a list hashed in part, in dev too, naming each requirement without a hash", () => {
    const message = configProblems(withPip("dev", [hashed("six==1.17.0"), "idna==3.20", "certifi==2026.7.22"]));
    expect(message).toContain("ray-gpu:workloads[0].runtimeEnv.pip[1]");
    expect(message).toContain("ray-gpu:workloads[0].runtimeEnv.pip[2]");
    expect(message).not.toContain("runtimeEnv.pip[0]");
    expect(message).toMatch(/all requirements or none/);
  });

  it("refuses every unhashed requirement of a prod job, with the fix, and accepts hashed ones", () => {
    const message = configProblems(withPip("prod", ["six==1.17.0", "idna==3.20"]));
    expect(message).toContain("ray-gpu:workloads[0].runtimeEnv.pip[0]");
    expect(message).toContain("ray-gpu:workloads[0].runtimeEnv.pip[1]");
    expect(message).toMatch(/a prod job installs nothing unverified.*--hash=sha256/);
    expect(() => configProblems(withPip("prod", [hashed("six==1.17.0")]))).toThrow("expected a ConfigError");
  });

  it("refuses the same for a TypeScript caller's prod job", () => {
    const spec = { ...(minimalConfig().workloads[0] as object), runtimeEnv: { pip: ["six==1.17.0"] } };
    const job = new TrainingJob(spec as never);
    const pools = { gpu: [{ name: "a10g-4x", instanceType: "g5.12xlarge" }] };
    expect(() => job.plan({ environment: "prod", pools } as never)).toThrow(
      /runtimeEnv\.pip\[0\].*nothing unverified/s,
    );
  });
});
