/**
 * Every resource type the program can create (FSx, admin access entries, a placement group, observability with remote
 * write: every optional feature on) has a row in `ray-gpu diff`'s replacement table, is a Kubernetes object (its own
 * rule), or is one of our components, whose children are compared one by one. A new resource type fails here until
 * its replace-forcing inputs are written down.
 */
import { describe, expect, it } from "vitest";
import { REPLACEMENT, replacementRule } from "../../cli/diff/replacement";
import { runProgram } from "./run-program";

/** Created with the in-cluster Grafana, not with remote write. */
const GRAFANA_ONLY_TYPES = ["random:index/randomPassword:RandomPassword"];

describe("the diff's replacement table", () => {
  it("covers every resource type the program creates with every feature on", async () => {
    const rs = await runProgram("prod", (config) => {
      const platform = JSON.parse(config["ray-gpu:platform"]!) as Record<string, Record<string, unknown>> & {
        gpuNodeGroups: Record<string, unknown>[];
      };
      platform["cluster"]!["adminRoleArns"] = ["arn:aws:iam::123456789012:role/platform-admins"];
      platform["storage"]!["fsx"] = { storageCapacityGiB: 2400, deploymentType: "PERSISTENT_2" };
      platform.gpuNodeGroups[0]!["availabilityZone"] = "us-east-1a";
      platform.gpuNodeGroups[0]!["clusterPlacementGroup"] = true;
      platform["observability"] = {
        remoteWrite: {
          url: "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-12345678/api/v1/remote_write",
        },
      };
      config["ray-gpu:platform"] = JSON.stringify(platform);
    });
    // The mock runtime runs the program once per process: types only the default in-cluster Grafana creates (its admin
    // password, checked in platform-deployed-defaults.test.ts) are listed here.
    const types = [...new Set([...rs.map((r) => r.type), ...GRAFANA_ONLY_TYPES])].sort();
    for (const t of ["aws:fsx/lustreFileSystem:LustreFileSystem", "aws:ec2/placementGroup:PlacementGroup"])
      expect(types, t).toContain(t);
    const uncovered = types.filter((t) => !t.startsWith("ray-gpu:index:") && !replacementRule(t));
    expect(uncovered).toEqual([]);
    // Every row is a type the program creates (no stale rows), but for the provider rows.
    const stale = Object.keys(REPLACEMENT).filter((t) => !types.includes(t));
    expect(stale).toEqual([]);
  });
});
