/**
 * Per-job storage scope, shown by evaluating the rendered policy documents: the Ray pods' role lets a job write and
 * delete under its own `checkpoints/<job>/`, `results/<job>/` and `run-records/<job>/`, read every object of the prefix, and nothing else;
 * the stack's KMS key is used only by the roles its policy names. A tiny evaluator: `Allow` statements, actions and
 * resources matched with IAM's `*` and `?`, the `${aws:PrincipalTag/...}` variable replaced by the session's tag
 * (EKS Pod Identity sets `kubernetes-service-account`); no `Deny` here, so an unmatched request is denied.
 */
import { describe, expect, it } from "vitest";
import { bucketAccessPolicy, kmsKeyPolicy, type PolicyDocument } from "../../../core/platform/iam";
import { jobServiceAccount } from "../../../core/platform/storage";

const BUCKET = "arn:aws:s3:::ray-gpu-prod-data";
const KEY = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab";
const PREFIX = "ray/";

/** IAM's wildcard match: `*` any run of characters, `?` one; case-sensitive (resources), or not (actions). */
function wildcard(pattern: string, value: string, ignoreCase = false): boolean {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`, ignoreCase ? "i" : "").test(value);
}

const list = (v: string | readonly string[] | undefined) => (v === undefined ? [] : typeof v === "string" ? [v] : v);

/** Whether `doc` allows `action` on `resource` for a session whose service-account tag is `serviceAccount`. */
function allows(doc: PolicyDocument, action: string, resource: string, serviceAccount: string): boolean {
  return doc.Statement.some(
    (st) =>
      st.Effect === "Allow" &&
      list(st.Action).some((a) => wildcard(a, action, true)) &&
      list(st.Resource).some((r) =>
        wildcard(r.replaceAll("${aws:PrincipalTag/kubernetes-service-account}", serviceAccount), resource),
      ),
  );
}

const policy = bucketAccessPolicy(BUCKET, PREFIX, KEY);
const object = (key: string) => `${BUCKET}/${key}`;
const may = (job: string, action: string, key: string) => allows(policy, action, object(key), jobServiceAccount(job));

describe("per-job storage scope (the Ray pods' role)", () => {
  it("lets a job write and delete its own checkpoints and results", () => {
    for (const action of ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"])
      for (const key of [
        "ray/checkpoints/sft-a/run/checkpoint_000001/model.pt",
        "ray/results/sft-a/part-0.parquet",
        "ray/run-records/sft-a/2026-12-03T16:03:17Z-0febd9a4.json",
      ])
        expect(may("sft-a", action, key), `${action} ${key}`).toBe(true);
  });

  it("refuses a job deleting or overwriting another job's objects, or a name sharing its start", () => {
    for (const other of [
      "ray/checkpoints/sft-b/run/checkpoint_000001/model.pt",
      "ray/results/sft-b/part-0.parquet",
      "ray/run-records/sft-b/2026-12-03T16:03:17Z-0febd9a4.json",
    ]) {
      expect(may("sft-a", "s3:DeleteObject", other)).toBe(false);
      expect(may("sft-a", "s3:PutObject", other)).toBe(false);
    }
    expect(may("sft", "s3:DeleteObject", "ray/checkpoints/sft-a/x")).toBe(false);
    expect(may("sft-a", "s3:DeleteObject", "ray/datasets/train.parquet")).toBe(false);
    expect(may("sft-a", "s3:DeleteObject", "other/checkpoints/sft-a/x")).toBe(false);
  });

  it("lets every job read the prefix (datasets, other jobs' checkpoints), and nothing outside it", () => {
    expect(may("sft-a", "s3:GetObject", "ray/checkpoints/sft-b/run/checkpoint_000001/model.pt")).toBe(true);
    expect(may("sft-a", "s3:GetObject", "ray/datasets/train.parquet")).toBe(true);
    expect(may("sft-a", "s3:GetObject", "private/keys.txt")).toBe(false);
  });

  it("lets Arrow put the empty directory markers above a job's folders, and no other key", () => {
    for (const marker of ["ray/", "ray/checkpoints/", "ray/results/", "ray/run-records/"])
      expect(may("sft-a", "s3:PutObject", marker), marker).toBe(true);
    expect(may("sft-a", "s3:DeleteObject", "ray/checkpoints/")).toBe(false);
    expect(may("sft-a", "s3:PutObject", "ray/checkpoints/x")).toBe(false);
  });
});

describe("the stack's KMS key policy", () => {
  const ray = "arn:aws:iam::111122223333:role/ray-gpu-storage-ray-role";
  const eks = "arn:aws:iam::111122223333:role/ray-gpu-cluster-cluster-role";
  const doc = kmsKeyPolicy({ partition: "aws", accountId: "111122223333", userRoleArns: [ray, eks] });
  const principals = (action: string) =>
    doc.Statement.filter((st) => list(st.Action).some((a) => wildcard(a, action, true)) && !st.Condition).flatMap(
      (st) => list((st.Principal as { AWS: string | string[] }).AWS),
    );

  it("lets only the roles it names decrypt and generate data keys; the account administers, without kms:*", () => {
    expect(principals("kms:Decrypt")).toEqual([ray, eks]);
    expect(principals("kms:GenerateDataKey")).toEqual([ray, eks]);
    expect(principals("kms:PutKeyPolicy")).toEqual(["arn:aws:iam::111122223333:root"]);
    expect(doc.Statement.flatMap((st) => list(st.Action))).not.toContain("kms:*");
  });

  it("names FSx's service-linked role when the bucket is linked to a file system", () => {
    const linked = kmsKeyPolicy({ partition: "aws", accountId: "1", userRoleArns: [ray], fsxFileSystemId: "fs-0abc" });
    expect(JSON.stringify(linked)).toContain(
      "role/aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/AWSServiceRoleForFSxS3Access_fs-0abc",
    );
  });
});
