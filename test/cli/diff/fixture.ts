/**
 * Fixture git repositories for `ray-gpu diff`: a base commit holding one stack file and a working tree holding another,
 * and the change the docs page shows as a pull-request comment (docs/cli.md, written by `npm run generate`).
 */
import { runMain } from "../../helpers/run-main";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { repoRoot } from "../../helpers/fixtures";

export type StackFile = { config: Record<string, unknown> };
/** A shipped stack file (Pulumi.<stack>.yaml at the repository root), parsed. */
export const shipped = (stack: string) =>
  parse(readFileSync(join(repoRoot, `Pulumi.${stack}.yaml`), "utf8")) as StackFile;
export const prod = () => shipped("prod");
export const workloads = (f: StackFile) => f.config["ray-gpu:workloads"] as Record<string, unknown>[];
export const platform = (f: StackFile) => f.config["ray-gpu:platform"] as Record<string, unknown>;
export const gpuPools = (f: StackFile) => platform(f)["gpuNodeGroups"] as Record<string, unknown>[];

/** A git repository whose HEAD holds `base` as Pulumi.<stack>.yaml, and whose working tree holds `head`. */
export function repo(base: StackFile, head: StackFile, stack = "prod"): string {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-diff-"));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "ignore" });
  git("init", "-q");
  git("config", "user.email", "test@example.com");
  git("config", "user.name", "test");
  copyFileSync(join(repoRoot, "Pulumi.yaml"), join(dir, "Pulumi.yaml"));
  writeFileSync(join(dir, `Pulumi.${stack}.yaml`), stringify(base));
  git("add", ".");
  git("commit", "-q", "-m", "base");
  writeFileSync(join(dir, `Pulumi.${stack}.yaml`), stringify(head));
  return dir;
}

/** `ray-gpu -C <dir> diff --base HEAD --stack prod ...args`, in process. */
export async function diff(dir: string, ...args: string[]) {
  return runMain(["-C", dir, "diff", "--base", "HEAD", "--stack", "prod", ...args], dir);
}

/**
 * The docs page's pull request: the SFT job leaves its example data for real (so it is submitted), the embedding
 * pipeline moves from 8 GPUs to 4, the inference pool may grow to 12 nodes, and the bucket gets a fixed name.
 */
export function docsChange(): { base: StackFile; head: StackFile } {
  const base = prod();
  const sft = workloads(base).find((w) => w["name"] === "sft-llama-8b")!;
  sft["example"] = false;
  sft["entrypoint"] = "python -m ray_gpu.examples.sft --data s3://acme-ml/sft/";
  const head = structuredClone(base);
  workloads(head).find((w) => w["name"] === "embed-chunks")!["gpus"] = 4;
  gpuPools(head).find((p) => p["name"] === "infer-a10g-1x")!["maxNodes"] = 12;
  platform(head)["storage"] = { ...(platform(head)["storage"] as object), bucketName: "acme-ml-prod" };
  return { base, head };
}

/** The Markdown comment of {@link docsChange}, as the workflow posts it. */
export async function docsComment(): Promise<string> {
  const { base, head } = docsChange();
  const r = await diff(repo(base, head), "--format", "markdown", "--fail-on", "no-fit,replace,prod-lifecycle");
  return r.out;
}
