/** `ray-gpu plan` shows, per workload, the variables that send downloads elsewhere (HTTPS only: core/config/env-rules). */
import { describe, expect, it } from "vitest";
import { planText, workloadStartup } from "../../../cli/plan/text";
import { planStack } from "../../../workloads/stack";
import { configWith, runtime } from "../../helpers/fixtures";

describe("plan text: redirects", () => {
  it("prints one redirects line for the workload that sets them, none for others", () => {
    const config = configWith((c) => {
      c.workloads[0]!["env"] = { PIP_INDEX_URL: "https://pypi.internal.example.com/simple" };
      c.workloads[0]!["runtimeEnv"] = { envVars: { HF_ENDPOINT: "https://hf-mirror.example.com" } };
    });
    const text = planText("dev", planStack(config, { runtime }), Infinity, workloadStartup(config.workloads));
    const lines = text.split("\n").filter((l) => l.startsWith("  redirects: "));
    expect(lines).toEqual([
      "  redirects: HF_ENDPOINT → https://hf-mirror.example.com, PIP_INDEX_URL → https://pypi.internal.example.com/simple",
    ]);
  });

  it("says what pip installs at start, and whether each package is checked against its hash", () => {
    const lines = (pip: string[]) => {
      const config = configWith((c) => {
        c.workloads[0]!["runtimeEnv"] = { pip };
      });
      const text = planText("dev", planStack(config, { runtime }), Infinity, workloadStartup(config.workloads));
      return text.split("\n").filter((l) => l.startsWith("  pip at start: "));
    };
    expect(lines(["six==1.17.0", "idna==3.20"])).toEqual([
      "  pip at start: 2 packages, not hash-checked (a prod job's need --hash)",
    ]);
    expect(lines([`six==1.17.0 --hash=sha256:${"0".repeat(64)}`])).toEqual([
      "  pip at start: 1 package, each checked against its --hash (--require-hashes)",
    ]);
  });
});
