import { describe, expect, it } from "vitest";
import { kindOf } from "../../policy/inputs";
import { appliesTo, RULES, type PolicyInput } from "../../policy/rules";
import { AWS_BAD_CASES, AWS_GOOD_CASES } from "./cases/aws";
import type { BadCase, Editable } from "./cases/fixtures";
import { IAM_BAD_CASES, IAM_GOOD_CASES } from "./cases/iam";
import { PSS_BAD_CASES, PSS_GOOD_CASES } from "./cases/pss";
import { RAY_BAD_CASES, RAY_GOOD_CASES } from "./cases/ray";
import { SECRET_BAD_CASES, SECRET_GOOD_CASES } from "./cases/secrets";

const rule = (name: string) => RULES.find((r) => r.name === name)!;
const check = (name: string, input: PolicyInput) => rule(name).check(input);

const BAD: readonly BadCase[] = [
  ...RAY_BAD_CASES,
  ...PSS_BAD_CASES,
  ...SECRET_BAD_CASES,
  ...IAM_BAD_CASES,
  ...AWS_BAD_CASES,
];
const GOOD = [...RAY_GOOD_CASES, ...PSS_GOOD_CASES, ...SECRET_GOOD_CASES, ...IAM_GOOD_CASES, ...AWS_GOOD_CASES].flatMap(
  (g) => g.rules.map((r) => ({ ...g, rule: r })),
);

describe("policy pack resource rules", () => {
  it.each(GOOD)("$rule passes $name", ({ rule: name, input }) => {
    expect(appliesTo(rule(name), input.type), name).toBe(true);
    expect(check(name, input)).toEqual([]);
  });

  it.each(BAD)("$rule catches $variant, naming the resource, the field and the fix", ({ rule: name, input, path }) => {
    expect(appliesTo(rule(name), input.type)).toBe(true);
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

  it("words the classes of issue 47: repeated keys, escalation, PSS controls, secrets in fields, API versions", () => {
    const at = (variant: string) => BAD.find((c) => c.variant.endsWith(variant))!;
    const one = (variant: string) => check(at(variant).rule, at(variant).input)[0];
    expect(one("Effect given twice in a statement")).toBe(
      'RolePolicy p: policy.Statement[0].Effect repeats the key "Effect" in one object: JSON.parse keeps the last, AWS ' +
        "may read another, so reviewers and AWS see different policies; write each key once",
    );
    expect(one("kms:Decrypt on every key")).toBe(
      'RolePolicy p: policy.Statement[0].Action "kms:Decrypt" on "arn:aws:kms:us-east-1:123456789012:key/*" (every key ' +
        "of the account) grants kms:Decrypt: uses any KMS key whose key policy trusts the account; name the roles, keys " +
        "or secrets it needs in Resource (their ARNs, in this account)",
    );
    expect(one("unsafe sysctl")).toBe(
      "RayCluster ray: spec.workerGroupSpecs[0].template.spec.securityContext.sysctls[1].name (worker group " +
        `${String((at("unsafe sysctl").input.props as Editable).spec.workerGroupSpecs[0].groupName)} pod) "kernel.msgmax" ` +
        "is not a safe sysctl; set only safe sysctls",
    );
    expect(one("RayJob at ray.io/v1alpha1")).toMatch(
      new RegExp(
        "^RayJob .+: apiVersion is ray\\.io/v1alpha1: deprecated in KubeRay v1\\.7, and its schema has no " +
          "authOptions, .+; use apiVersion ray\\.io/v1$",
      ),
    );
    expect(one("RayJob runtimeEnvYAML env_vars with a secret")).toMatch(
      /: spec\.runtimeEnvYAML \(env_vars\.DB_PASSWORD\) sets DB_PASSWORD in clear text: its name says it holds a secret; /,
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
