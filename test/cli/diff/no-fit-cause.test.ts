/**
 * `ray-gpu diff` names the memory a workload stops fitting in as `plan` does (GPU memory, host memory, or both), and
 * prints planned numbers at the plan's precision (3 decimals), never a raw estimate such as 11.570047502628572.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { noFitDetail, noFits, noFitWhere } from "../../../cli/diff/fit";
import { runMain } from "../../helpers/run-main";
import { repo, shipped, workloads, type StackFile } from "./fixture";

/** The shipped dev stack with its pre-training job on Llama 3.1 8B: its GPU memory fits, its CPU offload does not. */
function devOn8B(): StackFile {
  const head = shipped("dev");
  const job = workloads(head).find((w) => w["name"] === "llm-pretrain")!;
  expect(job["model"]).toBe("meta-llama/Llama-3.2-1B");
  job["model"] = "meta-llama/Llama-3.1-8B";
  return head;
}

const diffDev = (dir: string, ...args: string[]) =>
  runMain(["-C", dir, "diff", "--base", "HEAD", "--stack", "dev", "--no-preview", "--fail-on", "no-fit", ...args], dir);

describe("diff names why a workload stops fitting", () => {
  it("says host memory, not GPU memory, when CPU offload outgrows the worker (as plan does), in every format", async () => {
    const dir = repo(shipped("dev"), devOn8B(), "dev");
    const plan = await runMain(["-C", dir, "plan", "--stack", "dev"], dir);
    const block = plan.out.slice(plan.out.indexOf("Workload llm-pretrain"));
    expect(block).toMatch(/^ {2}GPU memory: fits:/m);
    expect(block).toContain("does not fit in host memory: offloading needs 179.49 GiB per node");

    const text = await diffDev(dir);
    expect(text.code).toBe(3);
    expect(text.out).toContain("llm-pretrain: STOPS FITTING IN HOST MEMORY (CPU offload needs 179.49 GiB per node");
    expect(text.err).toContain("no-fit: llm-pretrain does not fit in host memory (CPU offload needs 179.49 GiB");
    const markdown = await diffDev(dir, "--format", "markdown");
    expect(markdown.out).toContain("- :x: no-fit: llm-pretrain does not fit in host memory");
    const json = await diffDev(dir, "--format", "json");
    const doc = JSON.parse(json.out) as { fired: string[]; stacks: { diff: { stopsFittingIn: object } }[] };
    expect(doc.stacks[0]!.diff.stopsFittingIn).toEqual({
      "llm-pretrain": [{ memory: "host memory", needGiB: 179.49, haveGiB: 127 }],
    });
    for (const words of [text.out, text.err, markdown.out, doc.fired.join("\n")])
      expect(words).not.toMatch(/GPU MEMORY|fit in GPU memory/);
  });

  it("names both memories when neither fits, and GPU memory alone when only it does not", () => {
    const memory = { fits: false, requiredGiB: 25.5, usableGiB: 21.99, cpuOffloadGiBPerNode: 200 };
    const both = noFits({ memory, worker: { heapGiB: 127 } });
    expect(noFitWhere(both)).toBe("GPU and host memory");
    expect(noFitDetail(both)).toBe(
      "requires 25.5 GiB of 21.99 GiB per GPU; CPU offload needs 200 GiB per node but the worker has 127 GiB outside /dev/shm",
    );
    expect(noFits({ memory: { ...memory, cpuOffloadGiBPerNode: 0 }, worker: { heapGiB: 0 } })).toEqual([
      { memory: "GPU memory", needGiB: 25.5, haveGiB: 21.99 },
    ]);
    expect(noFits({ memory: { ...memory, fits: true, cpuOffloadGiBPerNode: 127 }, worker: { heapGiB: 127 } })).toEqual(
      [],
    );
  });
});

describe("diff's numbers", () => {
  it("prints no number of a diff of the shipped stacks with more than 3 decimals, in text and Markdown", async () => {
    // The base is a folder of the shipped stack files; the working tree re-plans a job in each stack.
    const base = mkdtempSync(join(tmpdir(), "ray-gpu-diff-base-"));
    for (const s of ["dev", "prod"]) writeFileSync(join(base, `Pulumi.${s}.yaml`), stringify(shipped(s)));
    const prodHead = shipped("prod");
    workloads(prodHead).find((w) => w["name"] === "llm-pretrain")!["model"] = "meta-llama/Llama-3.1-8B";
    const dir = repo(shipped("prod"), prodHead, "prod");
    writeFileSync(join(dir, "Pulumi.dev.yaml"), stringify(devOn8B()));
    for (const format of ["text", "markdown"]) {
      const r = await runMain(["-C", dir, "diff", "--base", base, "--all-stacks", "--no-preview", "-f", format], dir);
      expect(r.out).toContain("interruptions.stepSeconds: 7.436 → 55.92");
      expect(r.out).toContain("forecast.wallSeconds: 1549 → 11251");
      const long = r.out.match(/\d+\.\d{4,}/g) ?? [];
      expect(long).toEqual([]);
    }
  });
});
