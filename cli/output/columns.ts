/**
 * The width of the CLI's text output (`plan`, `render`, `preview`) and the one way it wraps a long line: at spaces,
 * with a hanging indent, never inside a word (a path, a URL, a `key=value`), and not inside a `code span`, a
 * `<placeholder>`, a `[bracketed note]` or between a number and its unit where the whole fits on a line.
 */

/** Most columns a line of text output takes: a common terminal's. */
export const COLUMNS = 120;

/** The columns `text` takes: one per code point. */
export const columnsOf = (text: string): number => [...text].length;

/** The mark that closes the group `word` opens: `` ` `` for an odd count of backticks, `>` or `]` for an open one. */
function opens(word: string): "`" | ">" | "]" | undefined {
  if ((word.match(/`/g)?.length ?? 0) % 2 === 1) return "`";
  if (/<[A-Za-z][^>]*$/.test(word)) return ">";
  return /\[[^\]]*$/.test(word) ? "]" : undefined;
}

/** A bare number (`17.591`, `(8`, `~22`): it stays on the line of the word after it, its unit (`GiB`, `s`, `GPUs`). */
const NUMBER = /^[(~$]?\d[\d.,]*$/;

/** The index of the word that ends the atom starting at `words[i]`: a group's closing word, or a number's unit. */
function atomEnd(words: readonly string[], i: number): number {
  const close = opens(words[i]!);
  if (close === undefined) return NUMBER.test(words[i]!) && i + 1 < words.length ? i + 1 : i;
  let end = i + 1;
  while (end < words.length && !words[end]!.includes(close)) end++;
  return end < words.length ? end : i;
}

/**
 * The words of `text` (split at single spaces) with each `code span`, `<placeholder>`, `[bracketed note]` and number
 * with its unit joined into one, where the joined atom is at most `most` columns; a longer one stays as its words.
 */
function atoms(text: string, most: number): string[] {
  const words = text.split(" ");
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const end = atomEnd(words, i);
    const atom = words.slice(i, end + 1).join(" ");
    if (columnsOf(atom) <= most) {
      out.push(atom);
      i = end;
    } else out.push(words[i]!);
  }
  return out;
}

/**
 * `text` after `indent`, broken at spaces into lines of at most `columns`; later lines start with `hang`. A word (or
 * group) longer than the room stands alone on its line. Joining the lines' words gives `text`'s words.
 *
 * @param hang - the start of every line after the first. @default `indent` and 2 more spaces
 * @param columns - the most columns a line takes. @default {@link COLUMNS}
 */
export function wrapped(text: string, indent = "", hang = `${indent}  `, columns = COLUMNS): string[] {
  const lines: string[] = [];
  let line = indent;
  let empty = true;
  for (const atom of atoms(text, columns - columnsOf(hang))) {
    if (!empty && columnsOf(line) + 1 + columnsOf(atom) > columns) {
      lines.push(line);
      line = `${hang}${atom}`;
    } else line = empty ? `${line}${atom}` : `${line} ${atom}`;
    empty = false;
  }
  return [...lines, line];
}
