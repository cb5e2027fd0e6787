/**
 * Variables that turn TLS checks off or move the AWS credential endpoint are refused in `env`, `runtimeEnv.envVars`
 * and `secretEnv`, each with its path; those that redirect an index, the hub, S3 or a proxy pass over HTTPS only and
 * are shown in `ray-gpu plan`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ENV_RULES, envRedirects, envRule, envRuleProblem, secretEnvRuleProblem } from "../../../core/config/env-rules";
import { parseStackConfig } from "../../../core/config/stack";
import { configProblems, minimalConfig, type RawConfig } from "../../helpers/fixtures";

function problems(mutate: (c: RawConfig) => void): string {
  const raw = minimalConfig();
  mutate(raw);
  return configProblems(raw);
}

describe("env rules: refused", () => {
  it("refuses PYTHONHTTPSVERIFY=0 and PIP_TRUSTED_HOST with their paths and the fix", () => {
    const text = problems((c) => {
      c.workloads[0]!["env"] = { PYTHONHTTPSVERIFY: "0", NODE_TLS_REJECT_UNAUTHORIZED: "false" };
      c.workloads[0]!["runtimeEnv"] = { envVars: { PIP_TRUSTED_HOST: "pypi.example.com", REQUESTS_CA_BUNDLE: "" } };
    });
    expect(text).toContain("ray-gpu:workloads[0].env.PYTHONHTTPSVERIFY: it turns TLS certificate checks off");
    expect(text).toContain('(got "0")');
    expect(text).toContain("ray-gpu:workloads[0].env.NODE_TLS_REJECT_UNAUTHORIZED: it turns TLS");
    expect(text).toContain("ray-gpu:workloads[0].runtimeEnv.envVars.PIP_TRUSTED_HOST: it turns TLS");
    expect(text).toContain("ray-gpu:workloads[0].runtimeEnv.envVars.REQUESTS_CA_BUNDLE: it replaces the trust roots");
    expect(text).toContain("remove it (PEP 493");
  });

  it("refuses the credential endpoint's variables in secretEnv by name, https-only ones too", () => {
    const text = problems((c) => {
      c.workloads[0]!["secretEnv"] = {
        AWS_CONTAINER_CREDENTIALS_FULL_URI: { secretName: "x", key: "uri" },
        AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: { secretName: "x", key: "f" },
        PIP_INDEX_URL: { secretName: "x", key: "index" },
      };
    });
    expect(text).toContain(
      "ray-gpu:workloads[0].secretEnv.AWS_CONTAINER_CREDENTIALS_FULL_URI: it moves where the AWS SDKs fetch credentials",
    );
    expect(text).toContain("(a Secret hides it from review, not from the job)");
    expect(text).toContain("secretEnv.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: it moves where");
    expect(text).toContain("secretEnv.PIP_INDEX_URL: its value must be shown in the plan");
  });

  it("lets values through that keep checks on: PYTHONHTTPSVERIFY=1, the system CA bundle", () => {
    for (const [name, value] of [
      ["PYTHONHTTPSVERIFY", "1"],
      ["NODE_TLS_REJECT_UNAUTHORIZED", "1"],
      ["SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"],
      ["AWS_EC2_METADATA_DISABLED", "true"],
    ] as const)
      expect(envRuleProblem(name, value), name).toBeUndefined();
  });
});

describe("env rules: https only", () => {
  it("accepts HTTPS redirects and shows them in the plan's order", () => {
    const env = {
      PIP_INDEX_URL: "https://pypi.internal.example.com/simple",
      HF_ENDPOINT: "https://hf-mirror.example.com",
      https_proxy: "https://proxy.example.com:3128",
      TOKENIZERS_PARALLELISM: "false",
    };
    const config = parseStackConfig({ ...minimalConfig(), workloads: [{ ...minimalConfig().workloads[0], env }] });
    expect(envRedirects(config.workloads[0]!.env)).toEqual([
      "HF_ENDPOINT → https://hf-mirror.example.com",
      "PIP_INDEX_URL → https://pypi.internal.example.com/simple",
      "https_proxy → https://proxy.example.com:3128",
    ]);
  });

  it("refuses http://, and a URL with a user or password without echoing it", () => {
    const text = problems((c) => {
      c.workloads[0]!["env"] = {
        PIP_EXTRA_INDEX_URL: "https://a.example.com/simple http://b.example.com/simple",
        AWS_ENDPOINT_URL_S3: "https://Canary:Canary-pw@s3.example.com",
      };
    });
    expect(text).toContain(
      "ray-gpu:workloads[0].env.PIP_EXTRA_INDEX_URL: must be https://<DNS host name>[:port][/path][?query] (no user, " +
        "password or fragment): it sends downloads elsewhere",
    );
    expect(text).toContain("ray-gpu:workloads[0].env.AWS_ENDPOINT_URL_S3: carries a user or password");
    expect(text).not.toContain("Canary");
  });
});

describe("env rules: proxies", () => {
  it("accepts a proxy over http:// or https://, refuses one with a credential or another scheme", () => {
    expect(envRuleProblem("HTTPS_PROXY", "http://proxy.corp.example.com:3128")).toBeUndefined();
    expect(envRuleProblem("http_proxy", "https://proxy.corp.example.com")).toBeUndefined();
    expect(envRedirects({ HTTPS_PROXY: "http://proxy.corp.example.com:3128" })).toEqual([
      "HTTPS_PROXY → http://proxy.corp.example.com:3128",
    ]);
    expect(envRuleProblem("ALL_PROXY", "socks5://proxy.corp.example.com:1080")?.message).toMatch(
      /^must be http:\/\/ or https:\/\/<DNS host name>/,
    );
    const secret = envRuleProblem("HTTPS_PROXY", "http://me:Canary-pw@proxy.corp.example.com:3128");
    expect(secret?.redact).toBe(true);
    expect(secret?.message).not.toContain("Canary");
    expect(secretEnvRuleProblem("HTTPS_PROXY")).toMatch(/as an http:\/\/ or https:\/\/ URL without a credential$/);
  });
});

describe("env rules: the table", () => {
  it("has one rule per name, each with a reason and a source", () => {
    const names = ENV_RULES.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    for (const r of ENV_RULES) expect(r.reason.length * r.source.length, r.name).toBeGreaterThan(0);
  });

  it("property: a refuse-any name is refused under any value and any case; a name no rule governs never is", () => {
    const refuseAny = ENV_RULES.filter((r) => r.class === "refuse" && (r.refuses ?? "any") === "any");
    const value = fc.string({ maxLength: 40 });
    fc.assert(
      fc.property(fc.constantFrom(...refuseAny), fc.boolean(), value, (rule, lower, v) => {
        const name = lower ? rule.name.toLowerCase() : rule.name;
        expect(envRuleProblem(rule.prefix ? `${name}_X` : name, v)).toBeDefined();
        expect(secretEnvRuleProblem(name)).toBeDefined();
      }),
      { numRuns: 100 },
    );
    const free = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,20}$/).filter((n) => envRule(n) === undefined);
    fc.assert(
      fc.property(free, value, (name, v) => {
        expect(envRuleProblem(name, v)).toBeUndefined();
        expect(secretEnvRuleProblem(name)).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });

  it("property: an https-only variable passes exactly when each URL is https without a user", () => {
    const host = fc.stringMatching(/^[a-z][a-z0-9]{0,8}\.[a-z]{2,5}$/);
    const scheme = fc.constantFrom("https://", "http://", "ftp://", "");
    const user = fc.constantFrom("", "u@", "u:p@");
    const redirects = ENV_RULES.filter((r) => r.class === "https-only");
    fc.assert(
      fc.property(fc.constantFrom(...redirects), scheme, user, host, (rule, s, u, h) => {
        const ok = s === "https://" && u === "";
        const problem = envRuleProblem(rule.prefix ? `${rule.name}_S3` : rule.name, `${s}${u}${h}/simple`);
        expect(problem === undefined, `${s}${u}${h}`).toBe(ok);
        if (u !== "") expect(problem?.redact).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
