/**
 * Whatever the CLI prints passes one filter on its way out (cli/main.ts): a control character that came from a stack
 * file, a run record or an argument is shown as an escape, never sent to the terminal, where ESC sequences could
 * clear the screen and CR could forge a line. JSON output is unchanged by it.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { terminalSafe } from "../../cli/output/terminal-text";
import { repoRoot } from "../helpers/fixtures";
import { runMain } from "../helpers/run-main";

// eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "terminal-safety-"));
  dirs.push(dir);
  return dir;
}

describe("the CLI's output on a terminal", () => {
  it("shows an argument's ESC, CR and C1 bytes as escapes in the usage error that quotes it", async () => {
    // commander quotes an unknown option as it was given
    const r = await runMain(["plan", "--stack", "dev", "--x\u001b[2J\r✖ all good\u009b31m\u202e"]);
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(RAW_CONTROL);
    expect(r.err).toContain("--x\\x1b[2J\\x0d✖ all good\\u009b31m\\u202e");
  });

  it("shows a run record's operator name with ESC as an escape in tune's diagnosis", async () => {
    const dir = folder();
    cpSync(join(repoRoot, "examples/tune"), dir, { recursive: true });
    const file = join(dir, "starved-preprocessing.json");
    const record = JSON.parse(readFileSync(file, "utf8"));
    record.data.operators.find((o: { name: string }) => o.name === "MapBatches(Tokenize)").name =
      "\u001b]0;pwned\u0007Tok";
    writeFileSync(file, JSON.stringify(record));
    const r = await runMain(["-C", dir, "tune", "--stack", "tune", "--from", file]);
    expect(`${r.out}${r.err}`).not.toMatch(RAW_CONTROL);
    expect(r.out).toContain("\\x1b]0;pwned\\x07Tok");
  });

  it("leaves JSON output as it is: JSON holds no raw C0 control, and DEL, C1 and bidi become \\u escapes", () => {
    const value = { name: "a\u001b\r\u007f\u009b\u202eb", n: 1 };
    const json = JSON.stringify(value, null, 2);
    expect(JSON.parse(terminalSafe(json))).toEqual(value);
    expect(terminalSafe(json)).not.toMatch(RAW_CONTROL);
  });
});
