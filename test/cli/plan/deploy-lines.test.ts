/** The plan text's deploy notes: where pulumi up reaches the API, what pulumi destroy leaves, the queue's quota. */
import { describe, expect, it } from "vitest";
import { planText } from "../../../cli/plan/text";
import { planStack } from "../../../workloads/stack";
import { repoStack, runtime } from "../../helpers/fixtures";

describe("ray-gpu plan's deploy notes", () => {
  const text = planText("prod", planStack(repoStack("prod"), { runtime }));

  it("says prod's endpoint is private and how the first deploy reaches it", () => {
    expect(text).toContain("API endpoint: private only: pulumi up creates the Kubernetes objects through it");
  });

  it("lists what pulumi destroy leaves, each with a check", () => {
    const section = text.slice(text.indexOf("What pulumi destroy leaves or blocks on:"));
    expect(section.split("\n").filter((l) => l.startsWith("    check: "))).toHaveLength(3);
    expect(section).toContain("  Prometheus's 50 GiB EBS volume (claim in namespace monitoring, class ray-gpu-gp3): ");
  });

  it("shows the CPU pool's quota to the millicore", () => {
    const quota = planStack(repoStack("prod"), { runtime }).queue!.plan.quotas[0]!.cpus;
    expect(text).toMatch(new RegExp(`^  system +0/0 +28/${String(quota).replace(".", "\\.")}$`, "m"));
  });
});
