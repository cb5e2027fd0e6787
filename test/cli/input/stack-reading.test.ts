/**
 * Stack files read as Pulumi reads them (issue 45): values go-yaml v3 reads otherwise than YAML 1.2 are refused,
 * `Pulumi.yaml`'s project config is merged in and validated, and encrypted values must be ciphertexts.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { goYamlV3Scalar } from "../../../cli/input/go-yaml-scalars";
import { pulumiConfigMap } from "../../../cli/input/stack-file";
import { runMain } from "../../helpers/run-main";
import { stackLines } from "../../helpers/stack-lines";

/** A folder with `Pulumi.dev.yaml` (the given lines) and, when given, `Pulumi.yaml`. */
function stackDir(stack: readonly string[], project?: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-reading-"));
  writeFileSync(join(dir, "Pulumi.dev.yaml"), [...stack, ""].join("\n"));
  if (project) writeFileSync(join(dir, "Pulumi.yaml"), [...project, ""].join("\n"));
  return dir;
}

const PROJECT = ["name: ray-gpu", "runtime: nodejs"];
const plan = (dir: string) => runMain(["plan", "--stack", "dev", "-C", dir]);

describe("goYamlV3Scalar (go-yaml v3's resolve.go)", () => {
  it.each([
    ["010", { kind: "int", value: 8n }],
    ["030", { kind: "int", value: 24n }],
    ["1_000", { kind: "int", value: 1000n }],
    ["0b101", { kind: "int", value: 5n }],
    ["08", { kind: "float", value: 8 }],
    ["1e3", { kind: "float", value: 1000 }],
    ["1e400", { kind: "str", value: "1e400" }],
    ["yes", { kind: "str", value: "yes" }],
    ["0:30", { kind: "str", value: "0:30" }],
    ["~", { kind: "null" }],
    ["2001-12-14", { kind: "timestamp", text: "2001-12-14 00:00:00 +0000 UTC" }],
    ["2001-02-30", { kind: "str", value: "2001-02-30" }],
  ])("reads %s as go-yaml v3 does", (text, expected) => {
    expect(goYamlV3Scalar(text)).toEqual(expected);
  });
});

describe("stack files read as Pulumi reads them", () => {
  it("refuses maxNodes: 010, which Pulumi reads as 8, naming the line, the value and the fix", async () => {
    const lines = stackLines();
    lines[5] = "    gpuNodeGroups: [{ name: a10g-4x, instanceType: g5.12xlarge, maxNodes: 010 }]";
    const r = await plan(stackDir(lines));
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      "Pulumi.dev.yaml:6 config.ray-gpu:platform.gpuNodeGroups[0].maxNodes: 010 is read by Pulumi (go-yaml v3) as " +
        "the number 8, and by YAML 1.2 as 10; write 8 to say what Pulumi reads, or quote it ('010') if you meant the text",
    );
  });

  it("reads %YAML 1.1 as go-yaml v3 does: example: yes stays text (and is refused as not a boolean)", async () => {
    const r = await plan(
      stackDir([
        "%YAML 1.1",
        "---",
        ...stackLines("  ray-gpu:workloads:", "    - { kind: TrainingJob, name: t, model: m, gpus: 4, example: yes }"),
      ]),
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/ray-gpu:workloads\[0\]\.example: .*\(got "yes"\)/);
  });

  it("refuses %YAML 1.2, which go-yaml v3 refuses", async () => {
    const r = await plan(stackDir(["%YAML 1.2", "---", ...stackLines()]));
    expect(r.code).toBe(1);
    expect(r.err).toContain("Pulumi.dev.yaml:1: %YAML 1.2: Pulumi (go-yaml v3) refuses every version but 1.1");
  });

  it("refuses a key set both with and without the namespace", async () => {
    const r = await plan(stackDir(stackLines("  region: us-west-2")));
    expect(r.code).toBe(1);
    expect(r.err).toContain("✖ region: is ray-gpu:region, which this file also sets");
  });
});

describe("Pulumi.yaml's project config", () => {
  it("refuses an unknown ray-gpu: key there, naming Pulumi.yaml", async () => {
    const r = await plan(stackDir(stackLines(), [...PROJECT, "config:", "  ray-gpu:colour: blue"]));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/✖ \S*Pulumi\.yaml: ray-gpu:colour: unknown key; allowed keys are/);
  });

  it("compares aws:region there with ray-gpu:region", async () => {
    const r = await plan(stackDir(stackLines(), [...PROJECT, "config:", "  aws:region: eu-west-1"]));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/✖ \S*Pulumi\.yaml: aws:region: differs from ray-gpu:region \("us-east-1"\)/);
  });

  it("supplies a project default the stack file lacks, and the stack file's value wins", async () => {
    const project = [
      ...PROJECT,
      "config:",
      "  ray-gpu:region: { default: us-west-2 }",
      "  team:owner: ml",
      "  size: 8",
    ];
    const lines = stackLines().filter((l) => !l.includes("ray-gpu:region"));
    const dir = stackDir(lines, project);
    expect(pulumiConfigMap(join(dir, "Pulumi.dev.yaml"))).toMatchObject({
      "ray-gpu:region": "us-west-2",
      "team:owner": "ml",
      "ray-gpu:size": "8",
    });
    const own = stackDir(stackLines(), project.slice(0, -1));
    expect(pulumiConfigMap(join(own, "Pulumi.dev.yaml"))["ray-gpu:region"]).toBe("us-east-1");
    expect((await plan(own)).code).toBe(0);
  });

  it("refuses what Pulumi's project schema refuses, and a required key the stack does not set", async () => {
    const project = [...PROJECT, "config:", "  aws:profile: { default: x }", "  team: { type: string }"];
    const r = await plan(stackDir(stackLines(), project));
    expect(r.code).toBe(1);
    expect(r.err).toContain("config.aws:profile: is not the project's key: give it a value, not a default");
    const missing = await plan(stackDir(stackLines(), [...PROJECT, "config:", "  team: { type: string }"]));
    expect(missing.err).toContain(`declares team without a default, so every stack must set it`);
  });
});

describe("encrypted values", () => {
  it.each([
    ["{ secure: '' }", "not empty text"],
    ["{ secure: 5 }", "not a number"],
    ["{ secure: AAAB, note: x }", "holds secure with other keys (note)"],
    ["{ secure: hf_plaintext_token }", "is not a ciphertext pulumi config set --secret writes"],
  ])("refuses %s, naming the key and never the value", async (value, message) => {
    const r = await plan(stackDir(stackLines(`  team:token: ${value}`)));
    expect(r.code).toBe(1);
    expect(r.err).toContain(`✖ team:token: `);
    expect(r.err).toContain(message);
    expect(r.err).not.toContain("hf_plaintext_token");
  });

  it("accepts the ciphertexts pulumi config set --secret writes (passphrase/KMS and Pulumi Cloud)", async () => {
    const r = await plan(
      stackDir(
        stackLines(
          "  team:a: { secure: 'v1:4LMEAjBDIS0y3uIO:Nxy4A5D+y3UmZ4rjw5Lk' }",
          "  team:b: { secure: AAABAJ3v }",
        ),
      ),
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
  });
});
