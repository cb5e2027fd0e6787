/**
 * Changes to one workload entry of a stack file, made on the YAML document so that everything else (comments, order,
 * flow or block style) stays as the user wrote it; and the same changes shown as a diff of the entry's lines. A value
 * `tune` sets in a block-style entry carries the comment `# set by ray-gpu tune` (`TUNE_PIN_MARK`), so a later run
 * may take it back (`tunePins`); delete the comment to keep the value as your own. A flow-style entry
 * (`{ name: a, blockSizeMiB: 3 }`) has no room for the comment: its values stay the user's.
 */
import { isMap, isScalar, isSeq, parseDocument, type Node, type Scalar, type YAMLMap } from "yaml";
import { TUNE_PIN_MARK, type Change, type TunableField } from "../../core/tune/model";
import { UsageError } from "../io";

const WORKLOADS_KEY = "ray-gpu:workloads";

/** The entry of workload `name` in the stack file's `ray-gpu:workloads` list, and its index. */
function entryOf(doc: ReturnType<typeof parseDocument>, name: string, file: string): { map: YAMLMap; index: number } {
  const list = doc.getIn(["config", WORKLOADS_KEY], true);
  if (!isSeq(list)) throw new UsageError(`${file}: config.${WORKLOADS_KEY} is not a list written in the file`);
  const index = list.items.findIndex((item) => isMap(item) && item.get("name") === name);
  if (index < 0) throw new UsageError(`${file}: no entry named ${name} in config.${WORKLOADS_KEY}`);
  return { map: list.items[index] as YAMLMap, index };
}

/** One replacement of the text between two offsets. */
interface Edit {
  readonly from: number;
  readonly to: number;
  readonly text: string;
}

const lineStart = (text: string, at: number) => text.lastIndexOf("\n", at - 1) + 1;
const lineEnd = (text: string, at: number) => {
  const end = text.indexOf("\n", at);
  return end < 0 ? text.length : end + 1;
};

/** Whether a value's line carries tune's mark. */
const marked = (value: Node) => isScalar(value) && (value.comment ?? "").includes(TUNE_PIN_MARK);

/** The edit that makes one change to the entry: its value replaced, its line (or flow pair) removed, or one added. */
function editFor(text: string, map: YAMLMap, change: Change): Edit | undefined {
  const pair = map.items.find((p) => isScalar(p.key) && p.key.value === change.field);
  const key = pair?.key as Scalar | undefined;
  const value = pair?.value as Scalar | undefined;
  if (pair && change.to !== undefined) {
    const mark = map.flow || marked(value!) ? "" : `  # ${TUNE_PIN_MARK}`;
    return { from: value!.range![0], to: value!.range![1], text: `${change.to}${mark}` };
  }
  if (pair && map.flow) {
    const after = /^\s*,?\s*/.exec(text.slice(value!.range![2]))![0].length;
    return { from: key!.range![0], to: value!.range![2] + after, text: "" };
  }
  if (pair) return { from: lineStart(text, key!.range![0]), to: lineEnd(text, value!.range![1]), text: "" };
  if (change.to === undefined) return undefined;
  if (map.flow) return { from: map.range![0] + 1, to: map.range![0] + 1, text: ` ${change.field}: ${change.to},` };
  const first = map.items[0]!.key as Scalar;
  const indent = " ".repeat(first.range![0] - lineStart(text, first.range![0]));
  const at = lineEnd(text, (map.items[map.items.length - 1]!.value as Node).range![1]);
  return { from: at, to: at, text: `${indent}${change.field}: ${change.to}  # ${TUNE_PIN_MARK}\n` };
}

/**
 * The stack file's text with `changes` made to workload `name`'s entry: only the changed lines differ, so comments,
 * order and style (block or flow) stay as written.
 */
export function applyChanges(text: string, file: string, name: string, changes: readonly Change[]): string {
  const { map } = entryOf(parseDocument(text), name, file);
  const edits = changes.flatMap((c) => editFor(text, map, c) ?? []).sort((a, b) => b.from - a.from);
  return edits.reduce((out, e) => out.slice(0, e.from) + e.text + out.slice(e.to), text);
}

/** The stack file's text with every one of `fields` removed from workload `name`'s entry (the plan's own values). */
export function withoutFields(text: string, file: string, name: string, fields: readonly string[]): string {
  return applyChanges(
    text,
    file,
    name,
    fields.map((field) => ({ field: field as Change["field"], from: undefined, to: undefined, reason: "" })),
  );
}

/** The fields of workload `name`'s entry whose value an earlier `tune --write` set (their line carries the mark). */
export function tunePins(text: string, file: string, name: string, fields: readonly TunableField[]): TunableField[] {
  const { map } = entryOf(parseDocument(text), name, file);
  return fields.filter((field) => {
    const pair = map.items.find((p) => isScalar(p.key) && p.key.value === field);
    return pair !== undefined && marked(pair.value as Node);
  });
}

/** Where the entry is, for headings: `ray-gpu:workloads[1]`. */
export function entryPath(text: string, file: string, name: string): string {
  return `${WORKLOADS_KEY}[${entryOf(parseDocument(text), name, file).index}]`;
}

/** The changes as a diff of the entry's keys: `-` the line removed, `+` the line added. */
export function changeDiff(file: string, path: string, name: string, changes: readonly Change[]): string[] {
  const lines = [`--- ${file} ${path} (${name})`, `+++ ${file} ${path} (${name}), tuned`];
  for (const c of changes) {
    if (c.from !== undefined) lines.push(`-  ${c.field}: ${c.from}`);
    if (c.to !== undefined) lines.push(`+  ${c.field}: ${c.to}  # ${TUNE_PIN_MARK}`);
  }
  return lines;
}
