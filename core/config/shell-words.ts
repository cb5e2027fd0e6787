/**
 * A command line's words as a POSIX shell splits them, in one pass: unquoted white space separates words; single
 * quotes keep everything literally; double quotes keep everything but `\"`, `\\`, `` \` ``, `\$` and a backslash before
 * a newline; an unquoted backslash keeps the next character. Expansions (`$VAR`, `$(...)`) stay as written, which is
 * what the secret checks want to see: a `$` value is a variable, not a secret. An unclosed quote runs to the end.
 */

/** Characters a backslash escapes inside double quotes (POSIX 2.2.3). */
const ESCAPED_IN_DOUBLE = new Set(["$", "`", '"', "\\", "\n"]);

const isBlank = (ch: string) => ch === " " || ch === "\t" || ch === "\n";

/** Where the run of characters from `from` that need no care ends: a blank, a quote or a backslash. */
function plainEnd(command: string, from: number, quote: "'" | '"' | undefined): number {
  let i = from;
  if (quote === "'") while (i < command.length && command[i] !== "'") i++;
  else if (quote === '"') while (i < command.length && command[i] !== '"' && command[i] !== "\\") i++;
  else while (i < command.length && !isBlank(command[i]!) && !"'\"\\".includes(command[i]!)) i++;
  return i;
}

/** The character a backslash before `i` keeps: itself, or nothing for a newline (a continued line). */
const escaped = (command: string, i: number) => (command[i] === "\n" ? "" : (command[i] ?? ""));

/** The words of `command`, quotes removed. Linear in its length: plain runs are copied as slices. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < command.length;) {
    const end = plainEnd(command, i, quote);
    if (end > i) {
      word += command.slice(i, end);
      inWord = true;
      i = end;
      continue;
    }
    const ch = command[i]!;
    if (quote !== undefined && ch === quote) quote = undefined;
    else if (quote === '"') word += ESCAPED_IN_DOUBLE.has(command[i + 1] ?? "") ? escaped(command, ++i) : ch;
    else if (quote === undefined && isBlank(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\") {
      word += escaped(command, i + 1);
      inWord = true;
      i++;
    }
    i++;
  }
  if (inWord) words.push(word);
  return words;
}
