/**
 * The grammars of names and addresses handed to AWS and Kubernetes (core/config/grammars.ts): each accepts what its
 * source accepts and refuses what it refuses, and a refusal names the config path, the value and the rule.
 */
import { describe, expect, it } from "vitest";
import { dataUriProblem, grammar, GRAMMARS, type GrammarName } from "../../../core/config/grammars";
import { configProblems, minimalConfig } from "../../helpers/fixtures";

const CASES: Record<GrammarName, { accept: string[]; refuse: string[] }> = {
  rfc1035Label: { accept: ["a", "ray-jobs", "a1"], refuse: ["1a", "a-", "A", "a.b", "a".repeat(64)] },
  rfc1123Subdomain: {
    accept: ["hf", "0-token", "hf.token", "a".repeat(253)],
    refuse: ["Hf", "-a", "a.", "a..b", "a_b", "a".repeat(254)],
  },
  secretDataKey: { accept: ["token", "HF_TOKEN", ".dotfile", "a..b", "k-1.x"], refuse: [".", "..", "..x", "a/b", ""] },
  eksClusterName: { accept: ["ray-gpu", "0a_b", "a".repeat(100)], refuse: ["-a", "_a", "a.b", "a".repeat(101)] },
  availabilityZone: { accept: ["us-east-1a", "us-gov-west-1b", "ap-southeast-2c"], refuse: ["us-east-1", "use1-az1"] },
  iamRoleArn: {
    accept: [
      "arn:aws:iam::123456789012:role/admins",
      "arn:aws:iam::123456789012:role/development/apps/my-role",
      "arn:aws:iam::123456789012:role/a+=,.@_-b",
    ],
    refuse: [
      "arn:aws-cn:iam::123456789012:role/admins",
      "arn:aws:iam::123456789012:user/admins",
      "arn:aws:iam::12345:role/admins",
      "arn:aws:iam::123456789012:role/",
      `arn:aws:iam::123456789012:role/${"a".repeat(65)}`,
      "arn:aws:sts::123456789012:assumed-role/admins/session",
    ],
  },
  s3KeyPrefix: { accept: ["", "ray/", "a/b-c_d.e/"], refuse: ["ray", "/ray/", "Ray/", "a//"] },
  peftModuleName: { accept: ["q_proj", "lm_head", "_x", "c_attn"], refuse: ["", "1x", "model.q_proj", "q-proj"] },
};

describe("grammars", () => {
  it.each(Object.keys(CASES) as GrammarName[])("%s accepts and refuses as its source does", (name) => {
    const schema = grammar(name);
    for (const v of CASES[name].accept) expect(schema.safeParse(v).success, v).toBe(true);
    for (const v of CASES[name].refuse) expect(schema.safeParse(v).success, v).toBe(false);
  });

  it("names its source", () => {
    for (const g of Object.values(GRAMMARS)) expect(g.source).not.toBe("");
  });

  it.each([
    ["s3://example-corpus/chunks/", undefined],
    ["s3://tune/docs/", undefined],
    ["/fsx/data/", undefined],
    ["file:///tmp/x", undefined],
    ["https://example.com/x", 'must start with "s3://<bucket>/", "/" or "file://"'],
    ["s3://bucket", 'must start with "s3://<bucket>/", "/" or "file://"'],
    ["s3://my_bucket/x/", `names the bucket "my_bucket", not a valid S3 bucket name`],
    ["s3://a..b/x/", `names the bucket "a..b", not a valid S3 bucket name: must not hold two adjacent periods`],
    ["s3://bucket/a\nb", "has a control character in its key"],
  ])("data location %j", (uri, problem) => {
    if (problem === undefined) expect(dataUriProblem(uri)).toBeUndefined();
    else expect(dataUriProblem(uri)).toContain(problem);
  });

  it("counts an S3 key's length in bytes, as S3 does", () => {
    expect(dataUriProblem(`s3://bucket/${"é".repeat(512)}`)).toBeUndefined();
    expect(dataUriProblem(`s3://bucket/${"é".repeat(513)}`)).toBe("has a key longer than 1024 bytes (S3's limit)");
  });

  it("a refusal names the config path, the value and the rule", () => {
    const c = minimalConfig();
    c.platform.cluster["adminRoleArns"] = ["arn:aws-cn:iam::123456789012:role/admins"];
    c.workloads[0]!["dataset"] = { uri: "s3://my_bucket/x/" };
    c.workloads[0]!["secretEnv"] = { HF_TOKEN: { secretName: "hf.token", key: ".." } };
    const msg = configProblems(c);
    expect(msg).toContain(
      `✖ ray-gpu:platform.cluster.adminRoleArns[0]: ${GRAMMARS.iamRoleArn.rule} (got "arn:aws-cn:iam::123456789012:role/admins")`,
    );
    expect(msg).toContain(
      '✖ ray-gpu:workloads[0].dataset.uri: names the bucket "my_bucket", not a valid S3 bucket name: may hold only ' +
        "lowercase letters, digits, '.' and '-' (got \"s3://my_bucket/x/\")",
    );
    expect(msg).toContain(`✖ ray-gpu:workloads[0].secretEnv.HF_TOKEN.key: ${GRAMMARS.secretDataKey.rule} (got "..")`);
    expect(msg).not.toContain("secretName");
  });
});
