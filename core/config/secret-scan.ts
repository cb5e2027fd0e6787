/**
 * Finding credentials in a text in one pass: no pattern is run over a whole value, so the time grows with the text's
 * length and nothing else (a 4 MiB entrypoint is decided in milliseconds; `npm run bench:secrets`). Each credential
 * has a fixed prefix and a body of known characters; a body is measured once per run of those characters however many
 * prefixes start inside it, which is what keeps `sk-sk-sk-...` linear.
 */

/** The characters a credential's body may hold. */
type CharClass = (code: number) => boolean;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isLower = (c: number) => c >= 97 && c <= 122;
const isAlnum = (c: number) => isDigit(c) || isUpper(c) || isLower(c);
const UPPER_DIGIT: CharClass = (c) => isDigit(c) || isUpper(c);
const ALNUM: CharClass = isAlnum;
const ALNUM_DASH: CharClass = (c) => isAlnum(c) || c === 45;
const WORD: CharClass = (c) => isAlnum(c) || c === 45 || c === 95;

/** A credential by its issuer: prefixes, body characters and length (`exact`: the body is that long, then ends). */
interface Credential {
  /** With its article: "a Hugging Face token". */
  readonly issuer: string;
  readonly prefixes: readonly string[];
  readonly body: CharClass;
  readonly minLength: number;
  readonly exact?: boolean;
}

/** Prefixes and shapes of well-known credentials, each at a start not glued to a letter or digit before it. */
const CREDENTIALS: readonly Credential[] = [
  { issuer: "a Hugging Face token", prefixes: ["hf_"], body: ALNUM, minLength: 20 },
  { issuer: "an OpenAI-style API key", prefixes: ["sk-"], body: WORD, minLength: 20 },
  { issuer: "a GitHub token", prefixes: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], body: ALNUM, minLength: 30 },
  { issuer: "a GitHub token", prefixes: ["github_pat_"], body: (c) => isAlnum(c) || c === 95, minLength: 30 },
  { issuer: "a GitLab token", prefixes: ["glpat-"], body: WORD, minLength: 20 },
  { issuer: "a Slack token", prefixes: ["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"], body: ALNUM_DASH, minLength: 10 },
  { issuer: "an AWS access key id", prefixes: ["AKIA", "ASIA"], body: UPPER_DIGIT, minLength: 16, exact: true },
];

/** The span of the last run of one body's characters measured, so a start inside it is not measured again. */
interface RunMemo {
  start: number;
  end: number;
}

/** The end of the run of `body` characters in `text` from `from`. */
function runEnd(text: string, from: number, body: CharClass, memo: RunMemo): number {
  if (from >= memo.start && from <= memo.end) return memo.end;
  let end = from;
  while (end < text.length && body(text.charCodeAt(end))) end++;
  memo.start = from;
  memo.end = end;
  return end;
}

const codeAt = (text: string, i: number) => (i < text.length ? text.charCodeAt(i) : -1);

/** Whether credential `c`'s body starts at `from` (after its prefix): long enough, nothing glued after. */
function bodyAt(text: string, from: number, c: Credential, memo: RunMemo): boolean {
  const length = runEnd(text, from, c.body, memo) - from;
  if (length < c.minLength) return false;
  return !isAlnum(codeAt(text, c.exact ? from + c.minLength : from + length));
}

/** Every prefix, by its first character's code, with its credential's index. */
const BY_FIRST_CHAR: ReadonlyMap<number, readonly { prefix: string; index: number }[]> = (() => {
  const map = new Map<number, { prefix: string; index: number }[]>();
  CREDENTIALS.forEach((c, index) =>
    c.prefixes.forEach((prefix) =>
      map.set(prefix.charCodeAt(0), [...(map.get(prefix.charCodeAt(0)) ?? []), { prefix, index }]),
    ),
  );
  return map;
})();

/** A segment of a JSON Web Token from `from`: its end, or -1 when it is shorter than 8 characters. */
function jwtSegment(text: string, from: number): number {
  let end = from;
  while (end < text.length && WORD(text.charCodeAt(end))) end++;
  return end - from >= 8 ? end : -1;
}

/** A JSON Web Token at `i` (`eyJ<8+>.eyJ<8+>.<8+>`, nothing glued after); its tail is decided once per first segment. */
function jwtAt(text: string, i: number, memo: RunMemo & { tailOf?: number; tail?: boolean }): boolean {
  if (!text.startsWith("eyJ", i)) return false;
  const first = runEnd(text, i + 3, WORD, memo);
  if (first - (i + 3) < 8) return false;
  if (memo.tailOf !== first) {
    const second = text[first] === "." && text.startsWith("eyJ", first + 1) ? jwtSegment(text, first + 4) : -1;
    const third = second >= 0 && text[second] === "." ? jwtSegment(text, second + 1) : -1;
    memo.tailOf = first;
    memo.tail = third >= 0 && !isAlnum(codeAt(text, third));
  }
  return memo.tail!;
}

/** The credential starting somewhere in `text` at a position not glued to a letter or digit, by issuer. */
function prefixedCredential(text: string): string | undefined {
  const memos: RunMemo[] = CREDENTIALS.map(() => ({ start: -1, end: -1 }));
  const jwtMemo = { start: -1, end: -1 };
  for (let i = 0; i < text.length; i++) {
    if (i > 0 && isAlnum(text.charCodeAt(i - 1))) continue;
    for (const { prefix, index } of BY_FIRST_CHAR.get(text.charCodeAt(i)) ?? [])
      if (text.startsWith(prefix, i) && bodyAt(text, i + prefix.length, CREDENTIALS[index]!, memos[index]!))
        return CREDENTIALS[index]!.issuer;
    if (jwtAt(text, i, jwtMemo)) return "a JSON Web Token";
  }
  return undefined;
}

/** JavaScript's `\s`: the white space a `[^\s]` class stops at. */
const isSpace = (c: number) =>
  (c >= 9 && c <= 13) ||
  c === 32 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;

const URL_SCHEME: CharClass = (c) => isAlnum(c) || c === 43 || c === 45 || c === 46;
/** What ends a URL's user or password: white space, `/` and `@` (and `:` for the user). */
const ENDS_USER = (c: number) => isSpace(c) || c === 47 || c === 64 || c === 58;
const ENDS_PASSWORD = (c: number) => isSpace(c) || c === 47 || c === 64;

/** Whether a URL with a user and password (`scheme://user:password@`) is in `text`. */
function urlWithPassword(text: string): boolean {
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    let s = at;
    while (s > 0 && URL_SCHEME(text.charCodeAt(s - 1))) s--;
    if (!/[A-Za-z]/.test(text.slice(s, at))) continue;
    let i = at + 3;
    while (i < text.length && !ENDS_USER(text.charCodeAt(i))) i++;
    if (i === at + 3 || text[i] !== ":") continue;
    const pass = i + 1;
    for (i = pass; i < text.length && !ENDS_PASSWORD(text.charCodeAt(i)); i++);
    if (i > pass && text[i] === "@") return true;
  }
  return false;
}

/** `Bearer <16+ token characters>` (any case), the bearer scheme of an Authorization header or a config value. */
const BEARER = /(?<![A-Za-z0-9_])bearer\s+[A-Za-z0-9._~+/=-]{16}/i;
const PRIVATE_KEY = /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----/;

/** Which credential a text holds, by issuer (with its article), or undefined. Linear in the text's length. */
export function credentialIn(text: string): string | undefined {
  const prefixed = prefixedCredential(text);
  if (prefixed) return prefixed;
  if (PRIVATE_KEY.test(text)) return "a private key";
  if (BEARER.test(text)) return "a bearer credential";
  if (urlWithPassword(text)) return "a URL with a password";
  return undefined;
}
