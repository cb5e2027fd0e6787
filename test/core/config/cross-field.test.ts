/**
 * Values that validate field by field but cannot deploy or run: the platform's own namespaces as the workload
 * namespace, repeats in lists whose entries must differ, environment variables Ray, KubeRay, the device plugin or we
 * set, and a CPU-only Ray image for a GPU job. Each is refused with its path.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OWNED_ENV } from "../../../core/config/owned-env";
import { parseStackConfig } from "../../../core/config/stack";
import { planPlatform } from "../../../core/platform-plan";
import { RESERVED_NAMESPACES } from "../../../core/platform/namespaces";
import { configProblems, minimalConfig, repoStack, type RawConfig } from "../../helpers/fixtures";

const problemsOf = (edit: (c: RawConfig) => void) => {
  const c = minimalConfig();
  edit(c);
  return configProblems(c);
};

/** Every string under a `namespace` key, anywhere in `value`. */
function namespacesIn(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => namespacesIn(v, out));
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      if (k === "namespace" && typeof v === "string") out.add(v);
      else namespacesIn(v, out);
    }
  return out;
}

describe("values that validate but cannot deploy or run", () => {
  it("reserves every namespace the platform's releases and objects use, besides the workload namespace", () => {
    for (const stack of ["dev", "prod"] as const) {
      const config = repoStack(stack);
      const used = [...namespacesIn(planPlatform(config))].filter((ns) => ns !== config.platform.workloadNamespace);
      expect(used.length).toBeGreaterThan(2);
      expect(
        used.filter((ns) => !RESERVED_NAMESPACES.includes(ns)),
        stack,
      ).toEqual([]);
    }
    expect(RESERVED_NAMESPACES).toContain("monitoring");
  });

  it("property: every namespace the platform or Kubernetes uses is refused as the workload namespace", () => {
    fc.assert(
      fc.property(fc.constantFrom(...RESERVED_NAMESPACES), (ns) => {
        const msg = problemsOf((c) => (c.platform["workloadNamespace"] = ns));
        expect(msg).toContain(`✖ ray-gpu:platform.workloadNamespace: is a namespace the platform or Kubernetes uses`);
        expect(msg).toContain(`(got "${ns}")`);
      }),
    );
  });

  /** A config with an entry in every list of scalars the schema has, each valid on its own. */
  const everyList = (): RawConfig => {
    const c = minimalConfig();
    c.platform.cluster["adminRoleArns"] = ["arn:aws:iam::123456789012:role/admins"];
    c.platform["network"] = { availabilityZoneNames: ["us-east-1a", "us-east-1b"] };
    c.platform["security"] = { httpsEgressCidrs: ["10.0.0.0/8"] };
    c.workloads[0]!["runtimeEnv"] = { pip: ["torch==2.13.0"] };
    c.workloads.push(
      {
        kind: "LoRAFineTune",
        name: "sft",
        model: "meta-llama/Llama-3.1-8B",
        gpus: 4,
        lora: { targetModules: ["q_proj"] },
      },
      {
        kind: "BatchInference",
        name: "sweep",
        model: "meta-llama/Llama-3.1-8B-Instruct",
        gpus: 4,
        sweep: { temperature: [0.2] },
      },
    );
    return c;
  };
  const LISTS: readonly { path: string; list: (c: RawConfig) => unknown[]; twin?: unknown }[] = [
    { path: "platform.cluster.adminRoleArns", list: (c) => c.platform.cluster["adminRoleArns"] as unknown[] },
    { path: "platform.cluster.publicAccessCidrs", list: (c) => c.platform.cluster["publicAccessCidrs"] as unknown[] },
    {
      path: "platform.network.availabilityZoneNames",
      list: (c) => (c.platform["network"] as { availabilityZoneNames: unknown[] }).availabilityZoneNames,
    },
    {
      path: "platform.security.httpsEgressCidrs",
      list: (c) => (c.platform["security"] as { httpsEgressCidrs: unknown[] }).httpsEgressCidrs,
    },
    {
      path: "workloads[0].runtimeEnv.pip",
      list: (c) => (c.workloads[0]!["runtimeEnv"] as { pip: unknown[] }).pip,
      twin: "Torch>=2.0", // the same project under another spelling and pin
    },
    {
      path: "workloads[1].lora.targetModules",
      list: (c) => (c.workloads[1]!["lora"] as { targetModules: unknown[] }).targetModules,
    },
    {
      path: "workloads[2].sweep.temperature",
      list: (c) => (c.workloads[2]!["sweep"] as { temperature: unknown[] }).temperature,
    },
  ];

  it("the fixture with an entry in every list is valid", () => {
    expect(() => parseStackConfig(everyList())).not.toThrow();
  });

  it.each(LISTS)("refuses a repeat in $path, at the repeat's index, naming the first", ({ path, list, twin }) => {
    const c = everyList();
    const entries = list(c);
    entries.push(twin ?? entries[0]);
    expect(configProblems(c)).toMatch(
      new RegExp(`✖ ray-gpu:${path.replace(/[.[\]]/g, "\\$&")}\\[${entries.length - 1}\\]: repeats entry \\[0\\]; `),
    );
  });

  it("refuses an availability zone given twice (the issue's case)", () => {
    expect(
      problemsOf((c) => (c.platform["network"] = { availabilityZoneNames: ["us-east-1a", "us-east-1a"] })),
    ).toContain("✖ ray-gpu:platform.network.availabilityZoneNames[1]: repeats entry [0]; the VPC makes one private");
  });

  it("property: every variable we, Ray, KubeRay or the device plugin set is refused in env, secretEnv and runtimeEnv", () => {
    const names = OWNED_ENV.map((o) => (o.prefix ? `${o.name}X` : o.name));
    expect(names).toEqual(expect.arrayContaining(["RAY_ADDRESS", "CUDA_VISIBLE_DEVICES", "RAY_AUTH_TOKEN"]));
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.constantFrom("env", "secretEnv", "envVars"), (name, where) => {
        const msg = problemsOf((c) => {
          const w = c.workloads[0]!;
          if (where === "env") w["env"] = { [name]: "x" };
          else if (where === "secretEnv") w["secretEnv"] = { [name]: { secretName: "s", key: "k" } };
          else w["runtimeEnv"] = { envVars: { [name]: "x" } };
        });
        const path = where === "envVars" ? "runtimeEnv.envVars" : where;
        expect(msg).toContain(`✖ ray-gpu:workloads[0].${path}.${name}: `);
        expect(msg).toMatch(/is set by .* on every Ray container \(.+\); choose another name/);
      }),
    );
  });

  it("refuses public access ranges for a private API endpoint (EKS would ignore them)", () => {
    expect(problemsOf((c) => (c.platform.cluster["publicEndpoint"] = false))).toContain(
      "✖ ray-gpu:platform.cluster.publicAccessCidrs: applies to a public API endpoint only, and publicEndpoint is false",
    );
    expect(() =>
      parseStackConfig({
        ...minimalConfig(),
        platform: { ...minimalConfig().platform, cluster: { mode: "create", name: "p", publicEndpoint: false } },
      }),
    ).not.toThrow();
  });

  it("refuses a CPU-only Ray image for a GPU workload, and takes the CUDA builds", () => {
    expect(problemsOf((c) => (c.workloads[0]!["image"] = "rayproject/ray:2.58.0-py311"))).toContain(
      '✖ ray-gpu:workloads[0].image: is a CPU-only Ray image (tag "2.58.0-py311" names no CUDA build)',
    );
    for (const image of ["rayproject/ray:2.58.0-py311-gpu", "rayproject/ray:2.58.0-py311-cu128", "my/img:1"])
      expect(() =>
        parseStackConfig({ ...minimalConfig(), workloads: [{ ...minimalConfig().workloads[0]!, image }] }),
      ).not.toThrow();
  });
});
