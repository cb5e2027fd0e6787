/**
 * `Pulumi.yaml` and `Pulumi.<stack>.yaml` read as Pulumi reads them. Pulumi decodes them with go-yaml v3
 * (pulumi/pulumi sdk/go/common/encoding/marshal.go), which keeps YAML 1.1 habits (`010` is 8, `1_000` is 1000,
 * `2001-12-14` is a timestamp); the `yaml` library reads YAML 1.2's core schema. Every plain scalar whose meaning
 * differs between the two is refused, naming what Pulumi would read, so the plan never shows a value `pulumi up` would
 * not use. Also refused, as Pulumi refuses them or reads them its own way: a `%YAML` directive other than one `%YAML
 * 1.1` (go-yaml v3 refuses 1.2: "found incompatible YAML document"), keys that are not text (Pulumi's
 * SimplifyMarshalledValue: "expected only string keys"), `.nan`/`.inf` (config values travel as JSON, which has
 * neither) and YAML tags other than `!!str` (go-yaml v3 resolves `! 010` as 8).
 */
import { isMap, isPair, isScalar, isSeq, visit, type Document, type LineCounter, type Node, type Scalar } from "yaml";
import type { ConfigIssue } from "../../core/errors";
import { goYamlV3Scalar, type GoScalar } from "./go-yaml-scalars";
import { at, keyText, parseYamlText } from "./yaml";

/** The one tag both readers agree on. */
const STR_TAG = "tag:yaml.org,2002:str";

/** A key as written (`010`, not the 10 it is to YAML 1.2). */
const keyName = (key: unknown) => (isScalar(key) ? String(key.source ?? key.value) : keyText(key));

/** A tag as written: `!!int` for YAML's own. */
const shortTag = (tag: string) => tag.replace(/^tag:yaml\.org,2002:/, "!!");

/** The key path of the document itself. */
const ROOT = "(the document)";

/** Where a node sits, as a key path: `config.ray-gpu:platform.gpuNodeGroups[0].maxNodes`. */
function keyPath(path: readonly unknown[], node: unknown): string {
  const chain = [...path, node];
  const parts = chain.slice(0, -1).flatMap((parent, i) => {
    const child = chain[i + 1];
    if (isPair(parent)) return [child === parent.value ? `.${keyName(parent.key)}` : ""];
    if (isSeq(parent)) return [`[${parent.items.indexOf(child as never)}]`];
    return [];
  });
  return parts.join("").replace(/^\./, "") || ROOT;
}

/** Go's value in words, for messages. */
function goWords(go: GoScalar): string {
  switch (go.kind) {
    case "null":
      return "null (no value)";
    case "bool":
      return `the boolean ${go.value}`;
    case "int":
      return `the number ${go.value}`;
    case "float":
      return Number.isFinite(go.value) ? `the number ${go.value}` : `the float ${go.value}`;
    case "timestamp":
      return `a timestamp, handed to the program as the text "${go.text}"`;
    case "str":
      return `the text ${JSON.stringify(go.value)}`;
  }
}

/** Whether the `yaml` library's value of a plain scalar is what go-yaml v3 decodes. */
function agrees(go: GoScalar, value: unknown): boolean {
  switch (go.kind) {
    case "null":
      return value === null;
    case "bool":
    case "str":
      return value === go.value;
    case "int":
      return value === Number(go.value);
    case "float":
      return Number.isFinite(go.value) && value === go.value;
    case "timestamp":
      return false;
  }
}

/** The fix for a value the two readers read apart. */
function fixFor(go: GoScalar, source: string): string {
  const quote = `quote it ('${source}') if you meant the text`;
  if (go.kind === "float" && !Number.isFinite(go.value))
    return `Pulumi cannot load it (config values travel as JSON, which has no NaN or infinity); write a number, or ${quote}`;
  if (go.kind === "int" || go.kind === "float") return `write ${go.value} to say what Pulumi reads, or ${quote}`;
  if (go.kind === "str") return `quote it ('${source}') to keep the text, or write the value in a form both read alike`;
  return quote;
}

/** The problem of an untagged plain value scalar, if the readers disagree. */
function scalarIssue(node: Scalar, where: string, path: string): ConfigIssue | undefined {
  const source = String(node.source);
  const go = goYamlV3Scalar(source);
  if (agrees(go, node.value)) return undefined;
  const ours = typeof node.value === "string" ? `the text ${JSON.stringify(node.value)}` : String(node.value);
  return {
    path: `${where} ${path}`,
    message:
      `${source} is read by Pulumi (go-yaml v3) as ${goWords(go)}, and by YAML 1.2 as ${ours}; ` + fixFor(go, source),
  };
}

/** The problem of a mapping key Pulumi would not take: a key that is not text to go-yaml v3. */
function keyIssue(key: unknown, where: string, path: string): ConfigIssue | undefined {
  const issue = (message: string) => ({ path: `${where} ${path}`, message });
  if (!isScalar(key))
    return issue(`Pulumi refuses keys that are not text ("expected only string keys"); write a text key`);
  if (key.type !== "PLAIN" || key.tag) return undefined;
  const text = String(key.source);
  if (text === "<<") return undefined; // a merge key to both readers
  const go = goYamlV3Scalar(text);
  if (go.kind === "str" && key.value === go.value) return undefined;
  if (go.kind === "str")
    return issue(
      `Pulumi reads this key as the text "${text}", YAML 1.2 as ${String(key.value)}; quote the key ('${text}')`,
    );
  return issue(
    `Pulumi reads this key as ${goWords(go)}, and refuses keys that are not text ("expected only string keys"); ` +
      `quote the key ('${text}')`,
  );
}

/** Every `%YAML` directive problem: go-yaml v3 takes at most one, and only `%YAML 1.1` (its parserc.go). */
function directiveIssues(text: string, file: string): ConfigIssue[] {
  const lines = text.split(/\r?\n/);
  const end = lines.findIndex((l) => !/^(%|#|\s*$)/.test(l)); // directives come before the document
  const directives = lines
    .slice(0, end === -1 ? lines.length : end)
    .flatMap((l, i) =>
      /^%YAML\b/.test(l) ? [{ line: i + 1, version: /^%YAML[ \t]+([^\s#]*)/.exec(l)?.[1] ?? "" }] : [],
    );
  return directives.flatMap(({ line, version }, i) => {
    const path = `${file}:${line}`;
    if (i > 0)
      return [
        {
          path,
          message:
            'a second %YAML line: Pulumi (go-yaml v3) refuses the file ("found duplicate %YAML directive"); keep one',
        },
      ];
    if (version === "1.1") return [];
    const refused = '("found incompatible YAML document")';
    return [
      {
        path,
        message: `%YAML ${version}: Pulumi (go-yaml v3) refuses every version but 1.1 ${refused}; drop the line`,
      },
    ];
  });
}

/** Every place where Pulumi's reading and this reader's differ, or Pulumi would refuse the document. */
function pulumiIssues(doc: Document, file: string, lines: LineCounter, text: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [...directiveIssues(text, file)];
  const tagged = (node: Node, path: readonly unknown[]) => {
    if (!node.tag || node.tag === STR_TAG) return;
    issues.push({
      path: `${at(file, lines, node)} ${keyPath(path, node)}`,
      message: `the tag ${shortTag(node.tag)} is read differently by Pulumi (go-yaml v3); drop it and write the value plainly, or quote it`,
    });
  };
  visit(doc, {
    Scalar(key, node, path) {
      tagged(node, path);
      if (key === "key" || node.type !== "PLAIN" || node.tag) return;
      const issue = scalarIssue(node, at(file, lines, node), keyPath(path, node));
      if (issue) issues.push(issue);
    },
    Seq: (_, node, path) => tagged(node, path),
    Map(_, node, path) {
      tagged(node, path);
      for (const pair of node.items) {
        const where = at(file, lines, (isScalar(pair.key) || isMap(pair.key) ? pair.key : node) as Node);
        const parent = keyPath(path, node);
        const name = `${parent === ROOT ? "" : `${parent}.`}${keyName(pair.key)}`;
        const issue = keyIssue(pair.key, where, name);
        if (issue) issues.push(issue);
      }
    },
  });
  return issues;
}

/**
 * Parses a Pulumi project or stack file (or a workload file, which is pasted into one) as Pulumi reads it, refusing
 * what the two readers would read apart; see the module comment.
 */
export function parsePulumiYamlText(text: string, file: string): unknown {
  return parseYamlText(text, file, {
    coreSchema: true,
    moreIssues: (doc, lines) => pulumiIssues(doc, file, lines, text),
  });
}
