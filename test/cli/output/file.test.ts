/**
 * `--html` outputs go through one guarded writer: the trial's cases (the stack file overwritten, a link followed, a
 * FIFO waited on, `''` accepted, `/dev/full` unnamed, a Markdown page or a stack file that quotes the generator mark)
 * are refused with the path, and a page ray-gpu wrote, unchanged since, is replaced.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeOutputFile } from "../../../cli/output/file";
import { HTML_PAGE, page as htmlPage } from "../../../cli/output/html-page";

const page = (body: string) => htmlPage("a page", `<p>${body}</p>`);
const write = (dir: string, file: string) => () =>
  writeOutputFile({ flag: "--html", file, cwd: dir }, page("new"), HTML_PAGE);

describe("the guarded output file", () => {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-out-"));

  it("writes a new file, and replaces a page ray-gpu wrote", () => {
    write(dir, "plan.html")();
    expect(readFileSync(join(dir, "plan.html"), "utf8")).toBe(page("new"));
    writeFileSync(join(dir, "old.html"), page("old"));
    write(dir, "old.html")();
    expect(readFileSync(join(dir, "old.html"), "utf8")).toBe(page("new"));
  });

  it("never overwrites a file it did not write (the stack file), and leaves it as it was", () => {
    writeFileSync(join(dir, "Pulumi.dev.yaml"), "config: {}\n");
    expect(write(dir, "Pulumi.dev.yaml")).toThrow(
      /Pulumi\.dev\.yaml exists and is not a page ray-gpu wrote \(unchanged since\); remove it/,
    );
    expect(readFileSync(join(dir, "Pulumi.dev.yaml"), "utf8")).toBe("config: {}\n");
  });

  it("never replaces a file that only quotes the mark, or a page changed since it was written", () => {
    const mark = page("x")
      .split("\n")
      .find((l) => l.includes('name="generator"'))!;
    const quoting = [
      `# The page's mark: ${mark}\nconfig: {}\n`,
      `Pages carry \`${mark}\`.\n`,
      page("x") + "<!-- edited -->",
    ];
    quoting.forEach((text, i) => {
      writeFileSync(join(dir, `quoting-${i}.md`), text);
      expect(write(dir, `quoting-${i}.md`)).toThrow(/exists and is not a page ray-gpu wrote/);
      expect(readFileSync(join(dir, `quoting-${i}.md`), "utf8")).toBe(text);
    });
  });

  it("refuses a link, a FIFO, a folder, a device and an empty name, each naming the path", () => {
    writeFileSync(join(dir, "target.html"), page("target"));
    symlinkSync(join(dir, "target.html"), join(dir, "link.html"));
    expect(write(dir, "link.html")).toThrow(/link\.html is a symbolic link/);
    expect(readFileSync(join(dir, "target.html"), "utf8")).toBe(page("target"));
    execFileSync("mkfifo", [join(dir, "fifo.html")]);
    expect(write(dir, "fifo.html")).toThrow(/fifo\.html exists and is not a regular file/);
    mkdirSync(join(dir, "folder.html"));
    expect(write(dir, "folder.html")).toThrow(/folder\.html exists and is not a regular file/);
    expect(write(dir, "/dev/full")).toThrow(/--html \/dev\/full exists and is not a regular file/);
    expect(write(dir, "")).toThrow(/--html needs a file name/);
  });

  it("names the path when the write itself fails", () => {
    expect(write(dir, "no-such-folder/plan.html")).toThrow(/--html .*no-such-folder\/plan\.html: /);
  });
});
