/**
 * The command `ray-gpu tune` prints to apply its proposal runs as printed: it repeats the `-C` folder, the stack, the
 * record and the workload as given, each quoted for a POSIX shell where it needs to be.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applyCommand, shellWord } from "../../../cli/tune/text";
import { repoRoot } from "../../helpers/fixtures";
import { runMain } from "../../helpers/run-main";
import { StackFolders } from "./helpers";
import { SAMPLES_DIR, starvedStackText } from "./samples";

const folders = new StackFolders();
afterEach(() => folders.removeAll());

/** A folder named `name` holding the starved tune stack and its record (the shipped samples). */
function starvedFolder(name: string): { dir: string; record: string } {
  const dir = join(folders.make("other", ""), name);
  mkdirSync(dir);
  copyFileSync(join(repoRoot, SAMPLES_DIR, "Pulumi.tune.yaml"), join(dir, "Pulumi.tune.yaml"));
  copyFileSync(join(repoRoot, SAMPLES_DIR, "starved-preprocessing.json"), join(dir, "run.json"));
  return { dir, record: join(dir, "run.json") };
}

/** The words bash passes to `ray-gpu` when it runs `line`. */
function argvOf(line: string): string[] {
  const out = execFileSync("bash", ["-c", `ray-gpu() { printf '%s\\0' "$@"; }; ${line}`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
}

const applyLine = (out: string) => /^Apply it with: (.*)$/m.exec(out)?.[1];

describe("the command tune prints to apply its change", () => {
  it("quotes only the words a shell would split or expand", () => {
    expect(["examples/tune", "a b", "it's", "", "$HOME", "x@y:1,2+3%"].map(shellWord)).toEqual([
      "examples/tune",
      "'a b'",
      "'it'\\''s'",
      "''",
      "'$HOME'",
      "x@y:1,2+3%",
    ]);
    expect(applyCommand({ stack: "dev", from: "run.json" })).toBe("ray-gpu tune --stack dev --from run.json --write");
  });

  it("repeats -C, the record and the workload as given, and runs as printed", async () => {
    const { dir, record } = starvedFolder("it's a stack");
    const r = await runMain(["tune", "-C", dir, "--stack", "tune", "--from", record, "--workload", "embed-tune"]);
    expect(r.err).toBe("");
    const line = applyLine(r.out)!;
    expect(line).toBe(
      `ray-gpu -C ${shellWord(dir)} tune --stack tune --from ${shellWord(record)} --workload embed-tune --write`,
    );
    const applied = await runMain(argvOf(line));
    expect(applied.err).toBe("");
    expect(applied.out).toContain(`Wrote the change to ${join(dir, "Pulumi.tune.yaml")}`);
    expect(readFileSync(join(dir, "Pulumi.tune.yaml"), "utf8")).toBe(
      starvedStackText().replace("      preprocessConcurrency: 1\n", ""),
    );
  });

  it("has no -C when none was given: it runs from the same folder", async () => {
    const { dir, record } = starvedFolder("stack");
    const r = await runMain(["tune", "--stack", "tune", "--from", record], dir);
    expect(applyLine(r.out)).toBe(`ray-gpu tune --stack tune --from ${record} --write`);
  });
});
