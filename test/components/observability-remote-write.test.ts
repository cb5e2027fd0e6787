/**
 * Observability with remote write to Amazon Managed Service for Prometheus, on the dev program (its cluster looked up
 * as AWS would answer): Prometheus's remote-write role trusts its service account on this cluster only, and with no
 * Grafana there is no Grafana password, while the monitoring namespace keeps its NetworkPolicies.
 */
import { describe, expect, it } from "vitest";
import { clusterLookups, podIdentityConditions, scopedTo } from "./cluster-lookups";
import { ofType, runProgram } from "./run-program";

const AMP = "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-12345678/api/v1/remote_write";

describe("RayGpuPlatform, dev stack with remote write", () => {
  it("scopes the remote-write role to monitoring/prometheus on this cluster and runs Grafana with no password", async () => {
    const rs = await runProgram(
      "dev",
      (config) => {
        const platform = JSON.parse(config["ray-gpu:platform"]!) as Record<string, unknown>;
        platform["observability"] = { remoteWrite: { url: AMP } };
        config["ray-gpu:platform"] = JSON.stringify(platform);
      },
      clusterLookups("ray-gpu-dev"),
    );
    const roles = podIdentityConditions(rs);
    expect(roles["ray-gpu-observability-remote-write-role"]).toEqual(
      scopedTo("ray-gpu-dev", "monitoring", "prometheus"),
    );
    expect(ofType(rs, "random:index/randomPassword:RandomPassword").map((r) => r.name)).toEqual([]);
    expect(ofType(rs, "kubernetes:core/v1:Secret").map((r) => r.name)).not.toContain(
      "ray-gpu-observability-grafana-admin",
    );
    const monitoring = ofType(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy").filter(
      (r) => (r.inputs["metadata"] as { namespace: string }).namespace === "monitoring",
    );
    expect(monitoring).toHaveLength(3);
  });
});
