import { describe, expect, it } from "vitest";
import { kindOf } from "../../policy/inputs";
import { RULES, type PolicyInput } from "../../policy/rules";
import { AWS_BAD_CASES, AWS_GOOD_CASES } from "./cases/aws";
import type { BadCase } from "./cases/fixtures";
import { IAM_BAD_CASES, IAM_GOOD_CASES } from "./cases/iam";
import { RAY_BAD_CASES, RAY_GOOD_CASES } from "./cases/ray";

const rule = (name: string) => RULES.find((r) => r.name === name)!;
const check = (name: string, input: PolicyInput) => rule(name).check(input);

const BAD: readonly BadCase[] = [...RAY_BAD_CASES, ...IAM_BAD_CASES, ...AWS_BAD_CASES];
const GOOD = [...RAY_GOOD_CASES, ...IAM_GOOD_CASES, ...AWS_GOOD_CASES].flatMap((g) =>
  g.rules.map((r) => ({ ...g, rule: r })),
);

describe("policy pack resource rules", () => {
  it.each(GOOD)("$rule passes $name", ({ rule: name, input }) => {
    expect(rule(name).types, name).toContain(input.type);
    expect(check(name, input)).toEqual([]);
  });

  it.each(BAD)("$rule catches $variant, naming the resource, the field and the fix", ({ rule: name, input, path }) => {
    expect(rule(name).types).toContain(input.type);
    const found = check(name, input);
    expect(found).toHaveLength(1);
    expect(found[0]!.startsWith(`${kindOf(input.type)} ${input.name}: ${path} `), found[0]).toBe(true);
    expect(found[0]).toMatch(/; \S/);
  });

  it("words a violation: resource, path, problem, fix", () => {
    const at = (variant: string) => BAD.find((c) => c.variant.endsWith(variant))!;
    const one = (variant: string) => check(at(variant).rule, at(variant).input)[0];
    expect(one("s3:Get* on Resource *")).toBe(
      'RolePolicy p: policy.Statement[0].Action "s3:Get*" is a wildcard on Resource "*": it grants every matching ' +
        "action, present and future; list the actions the role needs (and narrow Resource to ARNs)",
    );
    expect(one("NotAction with Allow")).toBe(
      "RolePolicy p: policy.Statement[0].NotAction with Allow grants every action it does not list; list the actions " +
        "the role needs (and narrow Resource to ARNs)",
    );
    expect(one("AdministratorAccess attachment")).toBe(
      "RolePolicyAttachment a: policyArn attaches AdministratorAccess (arn:aws:iam::aws:policy/AdministratorAccess), " +
        "administrator-level access; attach a policy that lists the actions it needs",
    );
    expect(one("alias/aws/s3 as the key")).toBe(
      'BucketServerSideEncryptionConfiguration b: rules[0].applyServerSideEncryptionByDefault.kmsMasterKeyId "alias/aws/s3" ' +
        'is an AWS managed key; set sseAlgorithm "aws:kms" and kmsMasterKeyId to the ARN of the stack\'s own KMS key',
    );
    expect(one("EKS endpoint open as two halves")).toBe(
      "Cluster b: vpcConfig.publicAccessCidrs admits 3,702,390,784 public IPv4 addresses (a /8's worth or more; " +
        "0.0.0.0/0 is all); list your networks' CIDRs (together less than a /8), or set " +
        "vpcConfig.endpointPublicAccess: false",
    );
  });

  it("words a pod violation with the pod's role and the container's name", () => {
    const c = RAY_BAD_CASES.find((x) => x.variant === "RayJob head: capability added")!;
    expect(check(c.rule, c.input)).toEqual([
      `RayJob ${c.input.name}: spec.rayClusterSpec.headGroupSpec.template.spec.containers[0].securityContext.capabilities.add ` +
        "(head, container ray-head) adds NET_ADMIN; remove add: Ray needs no capability",
    ]);
    const img = RAY_BAD_CASES.find((x) => x.variant === "RayCluster worker: image without a tag")!;
    expect(check(img.rule, img.input)).toEqual([
      'RayCluster ray: spec.workerGroupSpecs[0].template.spec.containers[0].image "rayproject/ray" has no tag, so it ' +
        'runs whatever "latest" is at pull time; pin a version tag (rayproject/ray:2.58.0-py311-gpu) or a digest',
    ]);
  });
});
