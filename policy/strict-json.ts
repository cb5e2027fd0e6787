/**
 * Keys written twice in one object of JSON text. `JSON.parse` keeps the last of them silently; other readers keep the
 * first or refuse the text, and AWS reads IAM condition keys without regard to case. So a policy document with a
 * repeated key (`Statement` twice, `Effect` twice in one statement) reads one way to a reviewer and another to AWS.
 * Keys are compared as JSON means them (escapes decoded: `"Effect"` and `"Eff\u0065ct"` are one key) and without
 * regard to case. One pass over the text, linear in its length, iterative (no recursion however deep the nesting).
 * Pure.
 */

/** A key written a second time, with the JSON path of that second one (`.Statement[0].Effect`). */
export interface RepeatedKey {
  readonly path: string;
  /** The key as first written. */
  readonly first: string;
  /** The key as written again. */
  readonly again: string;
}

/** An object or array being read: its path, and for an object the keys seen (by their case-folded form). */
interface Frame {
  readonly path: string;
  readonly keys?: Map<string, string>;
  /** The object's current key, or the array's current index. */
  at: string | number;
  /** In an object, whether the next string is a key. */
  expectKey: boolean;
}

/** The index just after the string literal that starts at `start` (a `"`). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

/** A key as a path segment: `.Effect`, or `["a b"]` when it is not a plain name. */
export const keySegment = (key: string) => (/^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

/** The path of the value the frame is at (its current key or index). */
const childPath = (f: Frame | undefined) =>
  f === undefined ? "" : typeof f.at === "number" ? `${f.path}[${f.at}]` : `${f.path}${keySegment(f.at)}`;

/** Reads a key in an object frame, noting it when the object already has it. */
function readKey(top: Frame, key: string, found: RepeatedKey[]): void {
  const folded = key.toLowerCase();
  const first = top.keys!.get(folded);
  if (first !== undefined) found.push({ path: `${top.path}${keySegment(key)}`, first, again: key });
  else top.keys!.set(folded, key);
  top.at = key;
  top.expectKey = false;
}

/**
 * Every key written again in the same object of `text`, in order. `text` must be valid JSON (check with `JSON.parse`
 * first): the scan reads only strings and the structural characters `{`, `}`, `[`, `]` and `,`.
 */
export function repeatedKeys(text: string): RepeatedKey[] {
  const found: RepeatedKey[] = [];
  const stack: Frame[] = [];
  for (let i = 0; i < text.length;) {
    const ch = text[i]!;
    const top = stack.at(-1);
    if (ch === '"') {
      const end = stringEnd(text, i);
      if (top?.keys && top.expectKey) readKey(top, JSON.parse(text.slice(i, end)) as string, found);
      i = end;
      continue;
    }
    if (ch === "{") stack.push({ path: childPath(top), keys: new Map(), at: "", expectKey: true });
    else if (ch === "[") stack.push({ path: childPath(top), at: 0, expectKey: false });
    else if (ch === "}" || ch === "]") stack.pop();
    else if (ch === "," && top) {
      if (top.keys) top.expectKey = true;
      else top.at = (top.at as number) + 1;
    }
    i++;
  }
  return found;
}
