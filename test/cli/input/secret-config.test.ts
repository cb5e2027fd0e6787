/**
 * A workload's `secretEnv` that names a Pulumi config key: the stack file must hold it encrypted. A missing key used
 * to pass `plan` and crash `preview`; a clear-text one passed without a word.
 */
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runMain } from "../../helpers/run-main";
import { repoRoot } from "../../helpers/fixtures";
import { stackLines } from "../../helpers/stack-lines";

/** A dev stack with one submitted job whose HF_TOKEN comes from `ray-gpu-secrets:hfToken`, set as `secretLine`. */
function stackDir(secretLine: string): string {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-secret-"));
  cpSync(join(repoRoot, "Pulumi.yaml"), join(dir, "Pulumi.yaml"));
  writeFileSync(
    join(dir, "Pulumi.dev.yaml"),
    stackLines(
      "  ray-gpu:workloads:",
      "    - kind: TrainingJob",
      "      name: train",
      "      model: meta-llama/Llama-3.2-1B",
      "      gpus: 4",
      "      secretEnv: { HF_TOKEN: { pulumiConfig: hfToken } }",
      secretLine,
      "",
    ).join("\n"),
  );
  return dir;
}

const plan = (dir: string) => runMain(["plan", "--stack", "dev", "-C", dir]);

describe("secret config keys a workload names", () => {
  it("refuses a key the stack file does not set, with the command that sets it", async () => {
    const r = await plan(stackDir(""));
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      "✖ ray-gpu:workloads[0].secretEnv.HF_TOKEN.pulumiConfig: names ray-gpu-secrets:hfToken, which this stack file " +
        "does not set (pulumi up would stop there); run pulumi config set --secret ray-gpu-secrets:hfToken <value>",
    );
  });

  it("refuses a key held in clear text, without echoing its value", async () => {
    const r = await plan(stackDir("  ray-gpu-secrets:hfToken: hf_abcdefghijklmnopqrstuvwxyz0123"));
    expect(r.code).toBe(1);
    expect(r.err).toContain("which this stack file holds in clear text");
    expect(r.err).not.toContain("hf_abcdefghijklmnopqrstuvwxyz0123");
  });

  it("accepts an encrypted key", async () => {
    const r = await plan(stackDir("  ray-gpu-secrets:hfToken: { secure: AAABAJ3v0kq0c2VjcmV0 }"));
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
  });
});
