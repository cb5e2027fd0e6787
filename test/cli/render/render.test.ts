/** `ray-gpu render` writes only into a folder of its own, whole or not at all. */
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../cli/io";
import { ConfigError } from "../../../core/errors";
import { sha256 } from "../../../cli/render/ownership";
import { RENDER_MANIFEST, writeRender } from "../../../cli/render/write";
import { planDocument, planJsonPieces } from "../../../cli/plan/document";
import { stableJson } from "../../../core/serialize";
import { parseStackConfig } from "../../../core/config/stack";
import { planStack, type StackPlan } from "../../../workloads/stack";
import { repoStack, runtime } from "../../helpers/fixtures";

const tmp = () => mkdtempSync(join(tmpdir(), "ray-gpu-render-"));
const plan: StackPlan = planStack(repoStack("dev"), { runtime, requireRender: true });
const fewer: StackPlan = planStack(
  parseStackConfig({ ...repoStack("dev"), workloads: repoStack("dev").workloads.slice(0, 1) }),
  {
    runtime,
    requireRender: true,
  },
);
const prod: StackPlan = planStack(repoStack("prod"), { runtime, requireRender: true });
const listing = (dir: string) => readdirSync(dir).sort();
const snapshot = (dir: string) => Object.fromEntries(listing(dir).map((f) => [f, readFileSync(join(dir, f), "utf8")]));

describe("render output folder", () => {
  it("replaces its own previous render whole: files of a removed workload go, the manifest lists the rest", () => {
    const out = join(tmp(), "out");
    writeRender("dev", plan, out, { keep: [] });
    const written = writeRender("dev", fewer, out, { keep: [] });
    expect(listing(out)).toEqual([RENDER_MANIFEST, ...written].sort());
    const manifest = JSON.parse(readFileSync(join(out, RENDER_MANIFEST), "utf8")) as { sha256: Record<string, string> };
    expect(Object.keys(manifest.sha256).sort()).toEqual(written);
    expect(manifest.sha256["plan.json"]).toBe(sha256(readFileSync(join(out, "plan.json"))));
    expect(written.length).toBeLessThan(writeRender("dev", plan, join(tmp(), "o"), { keep: [] }).length);
  });

  it("a re-render links each file that did not change from the previous render, and writes the rest", () => {
    const out = join(tmp(), "out");
    writeRender("dev", plan, out, { keep: [] });
    const aside = join(tmp(), "kept-copy.yaml");
    linkSync(join(out, "configmap-llm-pretrain-tuning.yaml"), aside);
    const before = new Map(listing(out).map((f) => [f, statSync(join(out, f)).ino]));
    const written = writeRender("dev", fewer, out, { keep: [] });
    const fresh = join(tmp(), "fresh");
    writeRender("dev", fewer, fresh, { keep: [] });
    expect(snapshot(out)).toEqual(snapshot(fresh));
    const same = written.filter((f) => statSync(join(out, f)).ino === before.get(f));
    // Unchanged objects keep their file; plan.json changed, and a file linked elsewhere is never shared.
    expect(same).toContain("rayjob-llm-pretrain.yaml");
    expect(same).not.toContain("plan.json");
    expect(same).not.toContain("configmap-llm-pretrain-tuning.yaml");
    expect(written.every((f) => statSync(join(out, f)).nlink === 1)).toBe(true);
    expect(readFileSync(aside, "utf8")).toBe(readFileSync(join(out, "configmap-llm-pretrain-tuning.yaml"), "utf8"));
  });

  it("planned while written: each workload's objects are handed over once, then not kept, and the files match", () => {
    const handed: string[] = [];
    const streamed = join(tmp(), "streamed");
    const names = writeRender(
      "prod",
      (renderedTo) => {
        const p = planStack(repoStack("prod"), {
          runtime,
          requireRender: true,
          renderedTo: (r) => {
            handed.push(r.workload);
            renderedTo(r);
          },
        });
        expect(p.objects.every((o) => o.objects.length === 0)).toBe(true);
        return p;
      },
      streamed,
      { keep: [] },
    );
    expect(handed).toEqual(prod.objects.map((o) => o.workload));
    const whole = join(tmp(), "whole");
    expect(writeRender("prod", prod, whole, { keep: [] })).toEqual(names);
    expect(snapshot(streamed)).toEqual(snapshot(whole));
  });

  it("a plan that fails after some files were written leaves the previous render as it was, and no temporary folder", () => {
    const parent = tmp();
    const out = join(parent, "out");
    writeRender("dev", plan, out, { keep: [] });
    const before = snapshot(out);
    const failing = (renderedTo: (r: StackPlan["objects"][number]) => void): StackPlan => {
      plan.objects.forEach(renderedTo);
      throw new ConfigError([{ path: "ray-gpu:workloads[1].gpus", message: "planted" }]);
    };
    expect(() => writeRender("dev", failing, out, { keep: [] })).toThrow(/planted/);
    expect(snapshot(out)).toEqual(before);
    expect(listing(parent)).toEqual(["out"]);
  });

  it("writes plan.json piece by piece exactly as plan --json's document", () => {
    const out = join(tmp(), "out");
    writeRender("prod", prod, out, { keep: [] });
    expect(readFileSync(join(out, "plan.json"), "utf8")).toBe(stableJson(planDocument("prod", prod)));
    expect(stableJson(planDocument("prod", { ...prod, workloads: [] }))).toBe(
      [...planJsonPieces("prod", { ...prod, workloads: [] })].join(""),
    );
  });

  it("refuses a folder with a file it did not write, and never overwrites one named like its own, even with --force", () => {
    const out = tmp();
    writeFileSync(join(out, "rayjob-llm-pretrain.yaml"), "my notes");
    expect(() => writeRender("dev", plan, out, { keep: [] })).toThrow(/did not write \(rayjob-llm-pretrain\.yaml\)/);
    expect(() => writeRender("dev", plan, out, { keep: [], force: true })).toThrow(
      /would overwrite but cannot prove it wrote \(rayjob-llm-pretrain\.yaml/,
    );
    expect(listing(out)).toEqual(["rayjob-llm-pretrain.yaml"]);
    expect(readFileSync(join(out, "rayjob-llm-pretrain.yaml"), "utf8")).toBe("my notes");
  });

  it("with --force keeps every foreign entry beside the render: a file, a changed file of its own, .git, a project below", () => {
    const out = join(tmp(), "out");
    writeRender("dev", plan, out, { keep: [] });
    writeFileSync(join(out, "notes.txt"), "mine");
    mkdirSync(join(out, ".git"));
    writeFileSync(join(out, ".git", "HEAD"), "ref: refs/heads/main\n");
    mkdirSync(join(out, "infra"));
    writeFileSync(join(out, "infra", "Pulumi.yaml"), "name: infra\n");
    // A file of its own, edited by hand: no longer provably its own, so not replaced, and the render is refused.
    writeFileSync(join(out, "plan.json"), "{}");
    expect(() => writeRender("dev", fewer, out, { keep: [], force: true })).toThrow(
      /cannot prove it wrote \(plan\.json/,
    );
    rmSync(join(out, "plan.json"));
    const written = writeRender("dev", fewer, out, { keep: [], force: true });
    expect(listing(out)).toEqual([".git", RENDER_MANIFEST, "infra", "notes.txt", ...written].sort());
    expect(readFileSync(join(out, "notes.txt"), "utf8")).toBe("mine");
    expect(readFileSync(join(out, ".git", "HEAD"), "utf8")).toBe("ref: refs/heads/main\n");
    expect(readFileSync(join(out, "infra", "Pulumi.yaml"), "utf8")).toBe("name: infra\n");
    // The kept entries are not listed as the render's: the next render without --force still refuses the folder.
    expect(() => writeRender("dev", fewer, out, { keep: [] })).toThrow(/did not write \(\.git, infra, notes\.txt\)/);
  });

  it("deletes nothing a planted or older manifest lists: only files whose checksum the manifest of a render holds", () => {
    const out = tmp();
    writeFileSync(join(out, "thesis.tex"), "years of work");
    writeFileSync(join(out, "data.csv"), "a,b\n");
    const planted = { renderedBy: "ray-gpu render", stack: "dev", sha256: { "thesis.tex": "0".repeat(64) } };
    writeFileSync(join(out, RENDER_MANIFEST), JSON.stringify(planted));
    expect(() => writeRender("dev", plan, out, { keep: [] })).toThrow(/did not write \(data\.csv, thesis\.tex\)/);
    writeFileSync(join(out, RENDER_MANIFEST), JSON.stringify({ renderedBy: "ray-gpu render", files: ["thesis.tex"] }));
    expect(() => writeRender("dev", plan, out, { keep: [] })).toThrow(/data\.csv, thesis\.tex\).*older ray-gpu's/);
    writeRender("dev", plan, out, { keep: [], force: true });
    expect(readFileSync(join(out, "thesis.tex"), "utf8")).toBe("years of work");
    expect(readFileSync(join(out, "data.csv"), "utf8")).toBe("a,b\n");
  });

  it("never writes through a link: a linked output folder is refused, and a link inside the old folder is not followed", () => {
    const target = tmp();
    const link = join(tmp(), "out");
    symlinkSync(target, link);
    expect(() => writeRender("dev", plan, link, { keep: [] })).toThrow(/symbolic link/);
    const out = join(tmp(), "out");
    writeRender("dev", plan, out, { keep: [] });
    const victim = join(tmp(), "victim.txt");
    writeFileSync(victim, "keep me");
    // A render's own file replaced by a link to a file elsewhere: the next render must not write through it.
    const own = join(out, "plan.json");
    rmSync(own);
    symlinkSync(victim, own);
    expect(() => writeRender("dev", plan, out, { keep: [], force: true })).toThrow(
      /cannot prove it wrote \(plan\.json/,
    );
    expect(readFileSync(victim, "utf8")).toBe("keep me");
  });

  it("takes over a render by an older ray-gpu (a manifest without checksums): its files are its own by content", () => {
    const out = join(tmp(), "out");
    const written = writeRender("dev", plan, out, { keep: [] });
    const older = { renderedBy: "ray-gpu render", stack: "dev", files: written };
    writeFileSync(join(out, RENDER_MANIFEST), JSON.stringify(older));
    // A listed file whose content is not one of ours (edited into something else) stays foreign.
    writeFileSync(join(out, "plan.json"), "my notes");
    expect(() => writeRender("dev", fewer, out, { keep: [] })).toThrow(/did not write \(plan\.json\)/);
    rmSync(join(out, "plan.json"));
    const again = writeRender("dev", fewer, out, { keep: [] });
    expect(listing(out)).toEqual([RENDER_MANIFEST, ...again].sort());
  });

  it("refuses the root, folders right below it, the home folder, and folders holding the project", () => {
    const project = tmp();
    for (const out of ["/", "/tmp", homedir(), dirname(project)]) {
      expect(() => writeRender("dev", plan, out, { keep: [project], force: true }), out).toThrow(UsageError);
    }
  });

  it("resolves links in parent folders before deciding: a protected folder reached through a link is still refused", () => {
    const project = tmp();
    const links = tmp();
    symlinkSync(dirname(project), join(links, "up"));
    const viaLink = join(links, "up", basename(project));
    expect(() => writeRender("dev", plan, viaLink, { keep: [project], force: true })).toThrow(/it holds/);
    const home = tmp();
    writeFileSync(join(home, "notes.txt"), "mine");
    symlinkSync(dirname(home), join(links, "homes"));
    const saved = process.env["HOME"];
    process.env["HOME"] = home;
    try {
      expect(() => writeRender("dev", plan, join(links, "homes", basename(home)), { keep: [], force: true })).toThrow(
        UsageError,
      );
    } finally {
      process.env["HOME"] = saved;
    }
    expect(readFileSync(join(home, "notes.txt"), "utf8")).toBe("mine");
  });

  it("a write that fails part-way (a full disk) leaves the previous render as it was, and no temporary folder", () => {
    const parent = tmp();
    const out = join(parent, "out");
    writeRender("dev", plan, out, { keep: [] });
    const before = snapshot(out);
    let n = 0;
    const failing = (path: string, pieces: Iterable<string>) => {
      if (++n === 2) throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC", path });
      writeFileSync(path, [...pieces].join(""), { flag: "wx" });
    };
    expect(() => writeRender("dev", fewer, out, { keep: [], writeFile: failing })).toThrow(
      /no space left on the device \(ENOSPC\); .* is unchanged/,
    );
    expect(snapshot(out)).toEqual(before);
    expect(listing(parent)).toEqual(["out"]);
  });

  it("gives the output folder the permissions a new folder gets (not a temporary folder's 0700)", () => {
    const parent = tmp();
    const out = join(parent, "out");
    writeRender("dev", plan, out, { keep: [] });
    mkdirSync(join(parent, "plain"));
    expect(statSync(out).mode & 0o777).toBe(statSync(join(parent, "plain")).mode & 0o777);
  });

  it("creates missing parent folders, and names a parent that is a file", () => {
    const base = tmp();
    writeRender("dev", plan, join(base, "a", "b", "out"), { keep: [] });
    expect(listing(join(base, "a", "b", "out"))).toContain("plan.json");
    writeFileSync(join(base, "file"), "");
    expect(() => writeRender("dev", plan, join(base, "file", "out"), { keep: [] })).toThrow(
      /is not a folder|not a folder/,
    );
    mkdirSync(join(base, "empty"));
    expect(writeRender("dev", plan, join(base, "empty"), { keep: [] }).length).toBeGreaterThan(5);
  });
});
