/** `ray-gpu render` writes only into a folder of its own, whole or not at all. */
import {
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
import { RENDER_MANIFEST, writeRender } from "../../../cli/render/write";
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
const listing = (dir: string) => readdirSync(dir).sort();
const snapshot = (dir: string) => Object.fromEntries(listing(dir).map((f) => [f, readFileSync(join(dir, f), "utf8")]));

describe("render output folder", () => {
  it("replaces its own previous render whole: files of a removed workload go, the manifest lists the rest", () => {
    const out = join(tmp(), "out");
    writeRender("dev", plan, out, { keep: [] });
    const written = writeRender("dev", fewer, out, { keep: [] });
    expect(listing(out)).toEqual([RENDER_MANIFEST, ...written].sort());
    const manifest = JSON.parse(readFileSync(join(out, RENDER_MANIFEST), "utf8")) as { files: string[] };
    expect(manifest.files).toEqual(written);
    expect(written.length).toBeLessThan(writeRender("dev", plan, join(tmp(), "o"), { keep: [] }).length);
  });

  it("refuses a folder with a file it did not write, even one named like its own, unless --force", () => {
    const out = tmp();
    writeFileSync(join(out, "rayjob-llm-pretrain.yaml"), "my notes");
    expect(() => writeRender("dev", plan, out, { keep: [] })).toThrow(/did not write \(rayjob-llm-pretrain\.yaml\)/);
    expect(readFileSync(join(out, "rayjob-llm-pretrain.yaml"), "utf8")).toBe("my notes");
    writeRender("dev", plan, out, { keep: [], force: true });
    expect(readFileSync(join(out, "rayjob-llm-pretrain.yaml"), "utf8")).not.toBe("my notes");
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
    writeRender("dev", plan, out, { keep: [], force: true });
    expect(readFileSync(victim, "utf8")).toBe("keep me");
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
    const failing = (path: string, text: string) => {
      if (++n === 5) throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC", path });
      writeFileSync(path, text, { flag: "wx" });
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
