import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../../cli/main";
import { repoRoot } from "../../helpers/fixtures";

/** `plan --workload` of a BatchInference file with `extra` lines: exit code and errors. */
async function plan(extra: string) {
  const file = join(mkdtempSync(join(tmpdir(), "ray-gpu-")), "w.yaml");
  writeFileSync(
    file,
    "kind: BatchInference\nname: w\nmodel: meta-llama/Llama-3.1-8B\ngpus: 1\ninstanceType: g5.2xlarge\n" +
      `maxPromptTokens: 28000\nmaxNewTokens: 1000\n${extra}`,
  );
  let err = "";
  const code = await main(["plan", "--workload", file], { out: () => {}, err: (s) => (err += s), cwd: repoRoot });
  return { code, err };
}

describe("the vLLM a BatchInference pins", () => {
  it.each([
    ['runtimeEnv: { pip: ["vllm==0.6.3.post1"] }\n', ".runtimeEnv.pip[0]", "vLLM 0.6.3.post1 is older than 0.19"],
    ["image: vllm/vllm-openai:v0.8.5\n", ".image", "vLLM 0.8.5 is older than 0.19"],
    [
      "image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm/vllm-openai:v0.10.1\n",
      ".image",
      "vLLM 0.10.1 is older than 0.19",
    ],
  ])("refuses an engine older than the plan models (%s)", async (line, at, message) => {
    const { code, err } = await plan(line);
    expect(code).toBe(1);
    expect(err).toContain(`✖ BatchInference "w"${at}: ${message}`);
    expect(err).toContain("pin vllm 0.19.0 or later");
  });

  it.each([
    'runtimeEnv: { pip: ["vllm==0.19.0"] }\n',
    'runtimeEnv: { pip: ["vllm==0.23.0"] }\n',
    "image: vllm/vllm-openai:v0.19.1\n",
    "image: registry.example.com/team/vllm-openai:v0.6.3\n",
    "",
  ])("plans an engine it models, or one it cannot see (%s)", async (line) => {
    const { code, err } = await plan(line);
    expect(err).not.toContain("is older than");
    expect(code).toBe(0);
  });
});
