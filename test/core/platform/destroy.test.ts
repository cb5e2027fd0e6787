/** What `pulumi destroy` leaves behind or blocks on, per shipped stack; and Prometheus's claim going with it. */
import { describe, expect, it } from "vitest";
import { planPlatform } from "../../../core/platform-plan";
import { repoStack } from "../../helpers/fixtures";

describe("destroy leftovers", () => {
  it("lists Prometheus's volume and the VPC's interfaces for dev, and prod's kept bucket and key too", () => {
    const what = (stack: "dev" | "prod") => planPlatform(repoStack(stack)).destroy.map((d) => d.what);
    expect(what("dev")).toEqual([
      "Prometheus's 50 GiB EBS volume (claim in namespace monitoring, class ray-gpu-gp3)",
      "network interfaces in the stack's VPC",
    ]);
    expect(what("prod")).toEqual([...what("dev"), "the bucket and the KMS key"]);
  });

  it("gives a check that finds a left volume by the EBS CSI driver's namespace tag", () => {
    const [volume] = planPlatform(repoStack("dev")).destroy;
    expect(volume!.check).toBe(
      "aws ec2 describe-volumes --region us-east-1 --filters " +
        "Name=tag:kubernetes.io/created-for/pvc/namespace,Values=monitoring Name=status,Values=available",
    );
  });

  it("deletes Prometheus's claim with its StatefulSet, on a class that deletes the volume", () => {
    const obs = planPlatform(repoStack("prod")).observability!;
    const spec = (obs.helm.kubePrometheusStack.values as { prometheus: { prometheusSpec: Record<string, unknown> } })
      .prometheus.prometheusSpec;
    expect(spec["persistentVolumeClaimRetentionPolicy"]).toEqual({ whenDeleted: "Delete", whenScaled: "Retain" });
  });
});
