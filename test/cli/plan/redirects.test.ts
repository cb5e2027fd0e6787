/** `ray-gpu plan` shows, per workload, the variables that send downloads elsewhere (HTTPS only: core/config/env-rules). */
import { describe, expect, it } from "vitest";
import { planText, workloadRedirects } from "../../../cli/plan/text";
import { planStack } from "../../../workloads/stack";
import { configWith, runtime } from "../../helpers/fixtures";

describe("plan text: redirects", () => {
  it("prints one redirects line for the workload that sets them, none for others", () => {
    const config = configWith((c) => {
      c.workloads[0]!["env"] = { PIP_INDEX_URL: "https://pypi.internal.example.com/simple" };
      c.workloads[0]!["runtimeEnv"] = { envVars: { HF_ENDPOINT: "https://hf-mirror.example.com" } };
    });
    const text = planText("dev", planStack(config, { runtime }), Infinity, workloadRedirects(config.workloads));
    const lines = text.split("\n").filter((l) => l.startsWith("  redirects: "));
    expect(lines).toEqual([
      "  redirects: HF_ENDPOINT → https://hf-mirror.example.com, PIP_INDEX_URL → https://pypi.internal.example.com/simple",
    ]);
  });
});
