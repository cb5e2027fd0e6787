/**
 * What go-yaml v3 (gopkg.in/yaml.v3, the reader Pulumi loads `Pulumi.yaml` and `Pulumi.<stack>.yaml` with:
 * pulumi/pulumi sdk/go/common/encoding/marshal.go) makes of an untagged plain scalar, mirroring its `resolve` in
 * resolve.go (v3.0.1) step by step: a fixed table (true/True/TRUE, null, ~, .nan, .inf, <<), then for a leading digit
 * or sign a timestamp, then Go's `strconv.ParseInt(plain, 0, 64)` after removing every `_` (so `010` is 8 and `1_000`
 * is 1000), `ParseUint`, a YAML-1.2-style float, and the `0b`/`0o` spellings; anything else is text. Pure: no I/O.
 */

/** A scalar as go-yaml v3 decodes it into `any` (int, int64 and uint64 are all `int` here). */
export type GoScalar =
  | { readonly kind: "null" }
  | { readonly kind: "bool"; readonly value: boolean }
  | { readonly kind: "int"; readonly value: bigint }
  | { readonly kind: "float"; readonly value: number }
  /** `text`: Go's `time.Time.String()`, which Pulumi hands the program (config/object.go, `case time.Time`). */
  | { readonly kind: "timestamp"; readonly text: string }
  | { readonly kind: "str"; readonly value: string };

const NULL: GoScalar = { kind: "null" };
const bool = (value: boolean): GoScalar => ({ kind: "bool", value });
const float = (value: number): GoScalar => ({ kind: "float", value });
const str = (value: string): GoScalar => ({ kind: "str", value });
const int = (value: bigint): GoScalar => ({ kind: "int", value });

/** resolve.go's `resolveMapList`: exact spellings, looked up first. */
const RESOLVE_MAP: Readonly<Record<string, GoScalar>> = Object.fromEntries([
  ...["true", "True", "TRUE"].map((s) => [s, bool(true)]),
  ...["false", "False", "FALSE"].map((s) => [s, bool(false)]),
  ...["", "~", "null", "Null", "NULL"].map((s) => [s, NULL]),
  ...[".nan", ".NaN", ".NAN"].map((s) => [s, float(NaN)]),
  ...[".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"].map((s) => [s, float(Infinity)]),
  ...["-.inf", "-.Inf", "-.INF"].map((s) => [s, float(-Infinity)]),
  ["<<", str("<<")],
]);

/** resolve.go's `resolveTable`: the first character's hint; a character not listed makes the scalar text at once. */
function hintOf(text: string): "sign" | "digit" | "map" | "dot" | undefined {
  const c = text[0];
  if (c === undefined) return "map";
  if (c === "+" || c === "-") return "sign";
  if (c >= "0" && c <= "9") return "digit";
  if ("yYnNtTfFoO~".includes(c)) return "map";
  return c === "." ? "dot" : undefined;
}

const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's `strconv.ParseUint(s, base, 64)` for `s` without `_`; undefined for a syntax or range error. */
function parseUint(s: string, base: number): bigint | undefined {
  let digits = s;
  if (base === 0) {
    base = 10;
    if (s[0] === "0") {
      const prefix = s.length >= 3 ? s[1]!.toLowerCase() : "";
      const prefixed = ({ b: 2, o: 8, x: 16 } as Record<string, number>)[prefix];
      base = prefixed ?? 8;
      digits = s.slice(prefixed ? 2 : 1);
    }
  }
  if (s === "" || !/^[0-9a-zA-Z]*$/.test(digits)) return undefined;
  let n = 0n;
  for (const c of digits.toLowerCase()) {
    const d = parseInt(c, 36);
    if (d >= base) return undefined;
    n = n * BigInt(base) + BigInt(d);
  }
  return n <= UINT64_MAX ? n : undefined;
}

/** Go's `strconv.ParseInt(s, base, 64)`: an optional sign, then {@link parseUint}, within int64. */
function parseInt64(s: string, base: number): bigint | undefined {
  const neg = s.startsWith("-");
  const body = s.startsWith("+") || neg ? s.slice(1) : s;
  const u = s === "" ? undefined : parseUint(body, base);
  if (u === undefined) return undefined;
  if (neg) return u <= INT64_MAX + 1n ? -u : undefined;
  return u <= INT64_MAX ? u : undefined;
}

/** resolve.go's `yamlStyleFloat`. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/** Go's `strconv.ParseFloat(s, 64)` for a text starting with `.` (decimal only; `_` only between digits). */
function parseDotFloat(s: string): number | undefined {
  if (!/^\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?$/.test(s)) return undefined;
  const value = Number(s.replaceAll("_", ""));
  return Number.isFinite(value) ? value : undefined; // Go: ±Inf with a range error
}

/** A finite float of the decimal form, or undefined (Go's ParseFloat gives a range error past float64). */
function decimalFloat(plain: string): number | undefined {
  if (!YAML_STYLE_FLOAT.test(plain)) return undefined;
  const value = Number(plain);
  return Number.isFinite(value) ? value : undefined;
}

/** The `0b`/`-0b`/`0o`/`-0o` steps of resolve.go, which pass the rest (sign included) to ParseInt/ParseUint. */
function prefixedInt(plain: string): bigint | undefined {
  for (const [prefix, base] of [
    ["0b", 2],
    ["0o", 8],
  ] as const) {
    if (plain.startsWith(prefix)) return parseInt64(plain.slice(2), base) ?? parseUint(plain.slice(2), base);
    if (plain.startsWith(`-${prefix}`)) return parseInt64(`-${plain.slice(3)}`, base);
  }
  return undefined;
}

/** The int, float or timestamp of a scalar starting with a digit or a sign (resolve.go's `case 'D', 'S'`). */
function numberLike(text: string): GoScalar | undefined {
  const time = goTimestamp(text);
  if (time !== undefined) return { kind: "timestamp", text: time };
  const plain = text.replaceAll("_", "");
  const i = parseInt64(plain, 0) ?? parseUint(plain, 0);
  if (i !== undefined) return int(i);
  const f = decimalFloat(plain);
  if (f !== undefined) return float(f);
  const p = prefixedInt(plain);
  return p === undefined ? undefined : int(p);
}

/** What go-yaml v3 decodes the untagged plain scalar `text` (as folded, without quotes) to. */
export function goYamlV3Scalar(text: string): GoScalar {
  const hint = hintOf(text);
  if (hint === undefined) return str(text);
  const fixed = RESOLVE_MAP[text];
  if (fixed) return fixed;
  if (hint === "dot") {
    const f = parseDotFloat(text);
    return f === undefined ? str(text) : float(f);
  }
  if (hint === "map") return str(text);
  return numberLike(text) ?? str(text);
}

// Timestamps: resolve.go's parseTimestamp tries Go's time.Parse with these layouts, in order:
// "2006-1-2T15:4:5.999999999Z07:00", the same with a lower-case "t", "2006-1-2 15:4:5.999999999", and "2006-1-2".

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;
const leap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** Go's `getnum(s, false)`: one or two digits. */
const NUM = "(\\d\\d?)";
/** Go's time layouts above as one pattern each: date, then an optional time part ("T", "t" or " "). */
const DATE = new RegExp(`^(\\d{4})-${NUM}-${NUM}`);
const CLOCK = new RegExp(`^${NUM}:${NUM}:${NUM}(?:[.,](\\d+))?`);
/** `Z07:00`: `Z`, or a sign, two digits, `:`, two digits (Go checks only that they are digits). */
const ZONE = /^(?:Z|([+-])(\d\d):(\d\d))/;

/** Go's `time.Time.String()` of a parsed timestamp (a fixed zone without a name prints its offset twice). */
function goTimeString(date: number[], clock: number[], frac: string, offsetMinutes: number | undefined): string {
  const [y, mo, d] = date as [number, number, number];
  const [h, mi, s] = clock as [number, number, number];
  const fraction = frac.slice(0, 9).replace(/0+$/, "");
  const off = offsetMinutes ?? 0;
  const zone = `${off < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(off) / 60))}${pad(Math.abs(off) % 60)}`;
  const name = offsetMinutes === undefined || offsetMinutes === 0 ? "UTC" : zone;
  return `${pad(y, 4)}-${pad(mo)}-${pad(d)} ${pad(h)}:${pad(mi)}:${pad(s)}${fraction ? `.${fraction}` : ""} ${zone} ${name}`;
}

/** Go's time.Time.String() when go-yaml v3 reads `text` as a timestamp, else undefined. */
export function goTimestamp(text: string): string | undefined {
  const date = DATE.exec(text);
  if (!date) return undefined;
  const [y, mo, d] = date.slice(1, 4).map(Number) as [number, number, number];
  const dayMax = mo === 2 && leap(y) ? 29 : DAYS_IN_MONTH[mo - 1];
  if (mo < 1 || mo > 12 || dayMax === undefined || d < 1 || d > dayMax) return undefined;
  let rest = text.slice(date[0].length);
  if (rest === "") return goTimeString([y, mo, d], [0, 0, 0], "", undefined);
  const sep = rest[0];
  if (sep !== "T" && sep !== "t" && sep !== " ") return undefined;
  // Go's time.Parse lets a space of the layout match a run of spaces.
  const afterSep = sep === " " ? rest.replace(/^ +/, "") : rest.slice(1);
  const clock = CLOCK.exec(afterSep);
  if (!clock) return undefined;
  const [h, mi, s] = clock.slice(1, 4).map(Number) as [number, number, number];
  if (h > 23 || mi > 59 || s > 59) return undefined;
  rest = afterSep.slice(clock[0].length);
  if (sep === " ") return rest === "" ? goTimeString([y, mo, d], [h, mi, s], clock[4] ?? "", undefined) : undefined;
  const zone = ZONE.exec(rest);
  if (!zone || zone[0].length !== rest.length) return undefined;
  const offset = zone[1] ? (zone[1] === "-" ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) : undefined;
  return goTimeString([y, mo, d], [h, mi, s], clock[4] ?? "", offset);
}
