import { describe, expect, it } from "vitest";
import { networkPolicyViolations, RAY_TYPES, type PolicyInput } from "../../policy/rules";

const NP = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
const ns = { namespace: "ray-jobs" };
const job: PolicyInput = { type: RAY_TYPES.RayJob, name: "j", props: { metadata: ns } };
const policy = (spec: Record<string, unknown>, namespace = "ray-jobs"): PolicyInput => ({
  type: NP,
  name: "deny",
  props: { metadata: { namespace }, spec },
});
const BOTH = ["Ingress", "Egress"];
const FIX = "add one with spec.podSelector: {}, spec.policyTypes: [Ingress, Egress] and no ingress or egress rules";
const missing = (runs = "RayJob j") =>
  `namespace ray-jobs runs Ray pods (${runs}) without a default-deny NetworkPolicy`;

/** Policies that do not make a default deny, and why the violation says so. */
const NOT_A_DENY: readonly { variant: string; np: PolicyInput; why: string }[] = [
  {
    variant: "a selector by label",
    np: policy({ podSelector: { matchLabels: { app: "x" } }, policyTypes: BOTH }),
    why: "podSelector selects only some pods (a default deny has podSelector: {})",
  },
  {
    variant: "a selector that selects nothing (matchExpressions, no matchLabels)",
    np: policy({ podSelector: { matchExpressions: [{ key: "none", operator: "Exists" }] }, policyTypes: BOTH }),
    why: "podSelector selects only some pods (a default deny has podSelector: {})",
  },
  {
    variant: "Ingress only",
    np: policy({ podSelector: {}, policyTypes: ["Ingress"] }),
    why: "policyTypes lacks Egress",
  },
  {
    variant: "no policyTypes",
    np: policy({ podSelector: {} }),
    why: "policyTypes lacks Ingress, policyTypes lacks Egress",
  },
];

describe("network-policy-present (stack rule)", () => {
  it("passes a namespace with a default deny, written with empty or absent selector fields", () => {
    for (const podSelector of [{}, { matchLabels: {}, matchExpressions: [] }, undefined])
      expect(networkPolicyViolations([job, policy({ podSelector, policyTypes: BOTH })])).toEqual([]);
    expect(networkPolicyViolations([policy({ podSelector: {} })])).toEqual([]);
  });

  it("asks for a default deny where no NetworkPolicy exists, naming every Ray resource there", () => {
    const cluster: PolicyInput = { type: RAY_TYPES.RayCluster, name: "c", props: { metadata: ns } };
    const service: PolicyInput = { type: RAY_TYPES.RayService, name: "s", props: { metadata: ns } };
    expect(networkPolicyViolations([job, cluster, service])).toEqual([
      `${missing("RayJob j, RayCluster c, RayService s")}; ${FIX}`,
    ]);
  });

  it.each(NOT_A_DENY)("does not count $variant, and says why", ({ np, why }) => {
    expect(networkPolicyViolations([job, np])).toEqual([
      `${missing()}; NetworkPolicy deny does not count: ${why}; ${FIX}`,
    ]);
  });

  it("does not count a deny with rules that allow traffic, nor one in another namespace", () => {
    const allowAll = policy({ podSelector: {}, policyTypes: BOTH, ingress: [{}], egress: [{}] });
    expect(networkPolicyViolations([job, allowAll])).toEqual([`${missing()}; ${FIX}`]);
    expect(networkPolicyViolations([job, policy({ podSelector: {}, policyTypes: BOTH }, "other")])).toEqual([
      `${missing()}; ${FIX}`,
    ]);
  });

  it("puts a Ray resource without a namespace in default", () => {
    const bare: PolicyInput = { type: RAY_TYPES.RayService, name: "s", props: {} };
    expect(networkPolicyViolations([bare])).toEqual([
      `namespace default runs Ray pods (RayService s) without a default-deny NetworkPolicy; ${FIX}`,
    ]);
  });
});
