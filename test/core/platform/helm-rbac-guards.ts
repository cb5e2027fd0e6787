/**
 * Which `secrets` rules a chart's RBAC templates render for a set of values, and in which kind of role: a small
 * evaluator of the Go template guards around them, not a Helm. There is no helm binary offline (Debian packages none;
 * `go install helm.sh/helm/v3/cmd/helm` needs the module proxy), so the tests read the pinned charts' template files
 * (test/fixtures/charts/<chart>-<version>/) line by line and evaluate only what decides whether a `secrets` line and a
 * `kind:` line render:
 *
 * - `if` / `else if` / `else` / `end`, `with` (renders when its value is truthy, Go's truthiness), and `range`, which is
 *   taken to render its body (every range in these files is over a list that is non-empty for our values: the watched
 *   namespaces, kube-state-metrics' `namespaces` or `list ""`; the tests assert the ones that matter);
 * - expressions of `.Values.a.b`, `$.Values.a.b`, `true`/`false`, strings, `$var`, parentheses, and the functions
 *   `and`, `or`, `not`, `eq`, `ne`, `has`; anything else (a pipe, another function) throws, so a template that changes
 *   under a version bump fails the test instead of being misread;
 * - `{{ include "<name>" ... }}` on a line of its own, where `<name>` is defined in the chart's `_helpers.tpl`, is
 *   replaced by that definition's body; guards inside it see no `.Values` (they throw when they matter);
 * - `$x := include "<helper>" ...` for the helpers given in `helpers` (a TypeScript copy of the helper, checked against
 *   the vendored text by the test).
 *
 * Rules added through free-form values (`extraRules`, `toYaml`) are invisible to it: the tests assert our values set
 * none. Conditions are evaluated lazily, only for the frames around a `secrets` or `kind:` line.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A `secrets` rule the templates render, and the kind of the role that holds it. */
export interface SecretsRule {
  readonly template: string;
  readonly kind: string;
  readonly verbs: readonly string[];
}

type Values = Readonly<Record<string, unknown>>;
/** A line and the `.Values` its guards read (undefined: inside an inlined definition, where `.` is its argument). */
interface Line {
  readonly text: string;
  readonly values: Values | undefined;
}
interface Frame {
  readonly kind: "if" | "with" | "range" | "define";
  test: () => boolean;
  taken: () => boolean;
}

/** TypeScript copies of chart helpers whose output a guard reads, by definition name. */
export type Helpers = Readonly<Record<string, (values: Values) => unknown>>;
/** The open frames, the variables set so far, and the helper copies. */
interface State {
  readonly frames: Frame[];
  readonly vars: Record<string, unknown>;
  readonly helpers: Helpers;
}

const ACTION = /\{\{-?\s*([\s\S]*?)\s*-?\}\}/g;

/** Go's truthiness: false, 0, nil, and empty strings, lists and maps are false. */
function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v && typeof v === "object") return Object.keys(v).length > 0;
  return Boolean(v);
}

function tokenize(expr: string): string[] {
  // `).a.b` closes a parenthesis and reads a field of its value: `(index .Values "x").kubeRBACProxy.enabled`.
  const tokens: string[] = expr.match(/"(?:[^"\\]|\\.)*"|\)\.[\w.]+|\(|\)|\||[^\s()|]+/g) ?? [];
  if (tokens.includes("|")) throw new Error(`unsupported pipe in guard: ${expr}`);
  return tokens;
}

/** Evaluates a guard expression over `values` and the helper variables. */
export function evaluate(expr: string, values: Values | undefined, vars: Readonly<Record<string, unknown>>): unknown {
  const tokens = tokenize(expr);
  let i = 0;
  const field = (path: string): unknown => {
    if (!values) throw new Error(`guard reads ${path} inside an inlined definition: ${expr}`);
    const segs = path.replace(/^\$?\./, "").split(".");
    if (segs[0] !== "Values") throw new Error(`unsupported field ${path} in guard: ${expr}`);
    return segs.slice(1).reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], values);
  };
  const term = (): unknown => {
    const t = tokens[i++];
    if (t === undefined) throw new Error(`guard ends early: ${expr}`);
    if (t === "(") {
      const v = call();
      const close = tokens[i++];
      if (close === ")") return v;
      if (!close?.startsWith(").")) throw new Error(`unbalanced parentheses in guard: ${expr}`);
      return close
        .slice(2)
        .split(".")
        .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], v);
    }
    if (t === "true" || t === "false") return t === "true";
    if (t.startsWith('"')) return JSON.parse(t) as string;
    if (t.startsWith(".") || t.startsWith("$.")) return field(t);
    if (t.startsWith(").")) throw new Error(`unbalanced parentheses in guard: ${expr}`);
    if (t.startsWith("$")) {
      if (!(t in vars)) throw new Error(`unknown variable ${t} in guard: ${expr}`);
      return vars[t];
    }
    throw new Error(`unsupported term ${t} in guard: ${expr}`);
  };
  const args = (): unknown[] => {
    const out: unknown[] = [];
    while (i < tokens.length && !tokens[i]!.startsWith(")")) out.push(term());
    return out;
  };
  const FUNCTIONS: Readonly<Record<string, (a: unknown[]) => unknown>> = {
    and: (a) => a.find((v) => !truthy(v)) ?? a[a.length - 1],
    or: (a) => a.find(truthy) ?? a[a.length - 1],
    not: (a) => !truthy(a[0]),
    eq: (a) => a.slice(1).some((b) => b === a[0]),
    ne: (a) => a[0] !== a[1],
    has: (a) => Array.isArray(a[1]) && a[1].includes(a[0]),
    index: (a) => (a[0] as Record<string, unknown> | undefined)?.[a[1] as string],
  };
  const call = (): unknown => {
    const head = tokens[i];
    if (head !== undefined && head in FUNCTIONS) {
      i++;
      return FUNCTIONS[head]!(args());
    }
    if (head !== undefined && /^[a-z]/i.test(head)) throw new Error(`unsupported function ${head} in guard: ${expr}`);
    return term();
  };
  const v = call();
  if (i !== tokens.length) throw new Error(`unparsed rest of guard: ${expr}`);
  return v;
}

/** The body of `{{ define "<name>" }}` in a helpers file, as lines. */
function definition(helpers: string, name: string): string[] {
  const lines = helpers.split("\n");
  const start = lines.findIndex((l) => l.includes(`define "${name}"`));
  if (start < 0) throw new Error(`no definition ${name}`);
  let depth = 0;
  for (let n = start; n < lines.length; n++) {
    for (const [, action] of lines[n]!.matchAll(ACTION)) {
      if (/^(if|with|range|define|block)\b/.test(action!)) depth++;
      else if (/^end\b/.test(action!)) depth--;
    }
    if (depth === 0) return lines.slice(start + 1, n);
  }
  throw new Error(`unterminated definition ${name}`);
}

/** The template's lines, each `include` of a definition in `helpers` replaced by its body. */
function expand(text: string, helpers: string, values: Values): Line[] {
  return text.split("\n").flatMap((l) => {
    const m = /^\{\{-?\s*include "([^"]+)"[^}]*\}\}\s*$/.exec(l.trim());
    if (m && helpers.includes(`define "${m[1]}"`)) {
      const body = definition(helpers, m[1]!).map((t) => ({ text: t, values: undefined }));
      return [{ text: "{{ __define }}", values }, ...body, { text: "{{ end }}", values }];
    }
    return [{ text: l, values }];
  });
}

/** The verbs of the rule whose `resources` holds line `at`: an inline list or the `- verb` lines after `verbs:`. */
function verbsAfter(lines: readonly Line[], at: number): string[] {
  for (let n = at; n < lines.length && (n === at || !/^\s*- apiGroups/.test(lines[n]!.text)); n++) {
    const inline = /verbs:\s*\[(.*)\]/.exec(lines[n]!.text);
    if (inline) return inline[1]!.split(",").map((v) => v.trim().replace(/^["']|["']$/g, ""));
    if (/verbs:\s*$/.test(lines[n]!.text)) {
      const out: string[] = [];
      for (let k = n + 1; k < lines.length && /^\s*- [^:]+$/.test(lines[k]!.text); k++)
        out.push(
          lines[k]!.text.replace(/^\s*- /, "")
            .trim()
            .replace(/^["']|["']$/g, ""),
        );
      return out;
    }
  }
  throw new Error(`no verbs after line ${at + 1}`);
}

/** Opens, flips or closes a frame for one control action; variable assignments of known helpers set `vars`. */
function control(action: string, line: Line, state: State): void {
  const { frames, vars, helpers } = state;
  const once = (f: () => boolean) => {
    let memo: boolean | undefined;
    return () => (memo ??= f());
  };
  const m = /^(if|else if|else|with|range|end|__define)\b\s*([\s\S]*)$/.exec(action);
  if (!m) {
    const assign = /^(\$\w+)\s*:=\s*include\s+"([^"]+)"/.exec(action);
    if (assign && helpers[assign[2]!]) vars[assign[1]!] = helpers[assign[2]!]!(line.values ?? {});
    return;
  }
  const [, word, expr] = m;
  const test = (e: string) => once(() => truthy(evaluate(e, line.values, vars)));
  if (word === "if" || word === "with") {
    const t = test(expr!);
    frames.push({ kind: word, test: t, taken: t });
  } else if (word === "range") frames.push({ kind: "range", test: () => true, taken: () => true });
  else if (word === "__define") frames.push({ kind: "define", test: () => true, taken: () => true });
  else if (word === "end") frames.pop();
  else {
    const top = frames[frames.length - 1]!;
    const before = top.taken;
    const t = word === "else" ? () => true : test(expr!);
    top.test = once(() => !before() && t());
    top.taken = once(() => before() || t());
  }
}

/** Every `secrets` rule `template` renders for `values` (chart defaults already merged), with its role's kind. */
export function secretsRulesOf(
  template: { readonly file: string; readonly text: string },
  chart: { readonly helpersText: string; readonly values: Values; readonly helpers: Helpers },
): SecretsRule[] {
  const { helpersText, values, helpers } = chart;
  const { file, text } = template;
  const lines = expand(text, helpersText, values);
  const frames: Frame[] = [];
  const vars: Record<string, unknown> = {};
  const out: SecretsRule[] = [];
  // The `kind:` lines of the current document, each with its guards (evaluated only when a `secrets` line needs it).
  let kinds: { kind: string; guards: (() => boolean)[] }[] = [];
  const live = () => frames.every((f) => f.test());
  lines.forEach((line, n) => {
    const actions = [...line.text.matchAll(ACTION)].map((a) => a[1]!).filter((a) => !a.startsWith("/*"));
    const controls = actions.filter((a) => /^(if|else|with|range|end|__define)\b|^\$\w+\s*:=/.test(a));
    if (controls.length > 0) {
      if (line.text.replace(ACTION, "").trim() !== "") throw new Error(`${file}:${n + 1}: text beside a guard`);
      for (const a of controls) control(a, line, { frames, vars, helpers });
      return;
    }
    if (/^---\s*$/.test(line.text)) kinds = [];
    const k = /^kind:\s*(\w+)\s*$/.exec(line.text);
    if (k) kinds.push({ kind: k[1]!, guards: frames.map((f) => f.test) });
    if (/(^\s*-\s*secrets\s*$)|"secrets"/.test(line.text) && live()) {
      const kind = kinds.filter((c) => c.guards.every((g) => g())).at(-1)?.kind ?? "(none)";
      out.push({ template: file, kind, verbs: verbsAfter(lines, n) });
    }
  });
  return out;
}

/** The named templates of a vendored chart, and its `_helpers.tpl` (empty when it has none). */
export function chartTemplates(dir: string, files: readonly string[]) {
  const helpersPath = join(dir, "templates", "_helpers.tpl");
  return {
    helpersText: existsSync(helpersPath) ? readFileSync(helpersPath, "utf8") : "",
    templates: files.map((file) => ({ file, text: readFileSync(join(dir, "templates", file), "utf8") })),
  };
}

/**
 * The YAML documents `template` renders for `values` (chart defaults already merged), as text: lines under a false
 * guard dropped, a line that only holds actions dropped, and every other action replaced by `x` (a name, a label).
 * Every guard of the template is evaluated, so one the evaluator cannot read throws.
 */
export function renderedDocuments(
  template: { readonly file: string; readonly text: string },
  chart: { readonly helpersText: string; readonly values: Values; readonly helpers: Helpers },
): string[] {
  const lines = expand(template.text, chart.helpersText, chart.values);
  const state: State = { frames: [], vars: {}, helpers: chart.helpers };
  const kept: string[] = [];
  lines.forEach((line, n) => {
    const actions = [...line.text.matchAll(ACTION)].map((a) => a[1]!).filter((a) => !a.startsWith("/*"));
    const controls = actions.filter((a) => /^(if|else|with|range|end|__define)\b|^\$\w+\s*:=/.test(a));
    if (controls.length > 0) {
      if (line.text.replace(ACTION, "").trim() !== "")
        throw new Error(`${template.file}:${n + 1}: text beside a guard`);
      for (const a of controls) control(a, line, state);
      return;
    }
    if (!state.frames.every((f) => f.test()) || line.text.replace(ACTION, "").trim() === "") return;
    kept.push(line.text.replace(ACTION, "x"));
  });
  return kept
    .join("\n")
    .split(/^---\s*$/m)
    .filter((d) => d.trim() !== "");
}

const isMap = (v: unknown): v is Values => typeof v === "object" && v !== null && !Array.isArray(v);
/** Helm's coalescing of values: maps merge key by key, anything else is replaced. */
export const mergeValues = (base: Values, over: Values | undefined): Values =>
  Object.fromEntries(
    [...new Set([...Object.keys(base), ...Object.keys(over ?? {})])].map((k) => {
      const [b, o] = [base[k], over?.[k]];
      return [k, isMap(b) && isMap(o) ? mergeValues(b, o) : o === undefined ? b : o];
    }),
  );
