/**
 * What a reader trips on in the CLI's messages: a word said twice ("or or") and a line that stops mid-sentence (a
 * dangling colon, comma, "or" or "and"). Values the user gave (`(got ...)`, quoted text) and the excerpt lines under
 * a YAML syntax error are the user's own words and are not judged.
 */

/** The lines of `stderr` the CLI wrote itself: its `ray-gpu:` lines, problem headers and `✖` lines. */
function ownLines(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^ {4,}/.test(line))
    .map((line) =>
      line
        .replace(/ \(got .*\)$/, "")
        .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
        .replace(/`[^`]*`/g, "`…`"),
    );
}

/** Each flaw found in `stderr`, as `flaw: line`; empty when the messages read well. */
export function messageFlaws(stderr: string): string[] {
  return ownLines(stderr).flatMap((line) => {
    const flaws: string[] = [];
    const doubled = /\b([A-Za-z]{2,}) \1\b/i.exec(line);
    if (doubled) flaws.push(`doubled word "${doubled[1]}": ${line}`);
    if (/(?<!https?):$|[,;]$|\b(or|and|of|the|a)$/i.test(line.trimEnd()) && !/\d+ problems?$/.test(line))
      flaws.push(`ends mid-sentence: ${line}`);
    return flaws;
  });
}
