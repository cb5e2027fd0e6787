/**
 * YAML (and JSON) input parsed in time linear in its size: duplicate keys are found with one set per mapping instead
 * of the parser's pairwise `uniqueKeys` check (quadratic: 16,000 keys took 4.9 s), and alias expansion is capped so
 * that a "billion laughs" file gets a clear error while legitimate files may use thousands of aliases.
 */
import {
  isAlias,
  isPair,
  isScalar,
  LineCounter,
  parseDocument,
  visit,
  type Alias,
  type Document,
  type Node,
} from "yaml";
import { ConfigError, type ConfigIssue } from "../../core/errors";

/**
 * Most alias expansions a document may cause (yaml counts uses of an anchor times the aliases inside it). yaml's
 * default of 100 refused legitimate files; 10,000 still stops an exponential expansion within a few levels.
 */
export const MAX_ALIAS_EXPANSIONS = 10_000;

/** `file:line` of a node, for messages. */
export function at(file: string, lines: LineCounter, node: Node | null | undefined): string {
  const offset = node?.range?.[0];
  return offset === undefined ? file : `${file}:${lines.linePos(offset).line}`;
}

/** A mapping key as the user wrote it, for comparing and for messages. */
export function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

/** Deepest nesting of mappings and lists accepted; a real stack file is about 6 deep. */
export const MAX_NESTING = 64;

/**
 * The node each alias of `doc` stands for: the last node before it, in document order, that carries its anchor (what
 * `alias.resolve(doc)` finds, and go-yaml v3 too), found in one pass; `alias.resolve(doc)` walks the whole document
 * for each alias, which made a stack file of a few hundred aliases take seconds.
 */
export function aliasTargets(doc: Document): Map<Alias, Node | undefined> {
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node | undefined>();
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) targets.set(node, anchors.get(node.source));
      else if (node.anchor) anchors.set(node.anchor, node);
    },
  });
  return targets;
}

/**
 * Every key given twice in one mapping, with the line of the second; and the first place nested deeper than
 * {@link MAX_NESTING}.
 */
function structureIssues(doc: Document, file: string, lines: LineCounter): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const targets = aliasTargets(doc);
  const tooDeep = (node: Node, path: readonly unknown[]) => {
    // The visitor's path holds the document, and a pair between a mapping and its values.
    const depth = path.filter((p) => !isPair(p)).length;
    if (depth <= MAX_NESTING) return undefined;
    issues.push({ path: at(file, lines, node), message: `nested more than ${MAX_NESTING} levels deep` });
    return visit.BREAK;
  };
  visit(doc, {
    Alias(_, alias, path) {
      // An alias inside the node its anchor marks makes a value that contains itself.
      const target = targets.get(alias);
      if (target && path.includes(target))
        issues.push({
          path: at(file, lines, alias as unknown as Node),
          message:
            `alias *${alias.source} is used inside the value its anchor &${alias.source} marks, which would make a ` +
            `value that contains itself; write the inner value out`,
        });
    },
    Seq: (_, seq, path) => tooDeep(seq, path),
    Map(_, map, path) {
      if (tooDeep(map, path)) return visit.BREAK;
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = keyText(pair.key);
        if (seen.has(key))
          issues.push({
            path: at(file, lines, pair.key as Node),
            message: `key "${key}" is given twice in the same mapping; keep one`,
          });
        seen.add(key);
      }
      return undefined;
    },
  });
  return issues;
}

/**
 * Syntax errors of the parser, one issue each at `file:line:column`: the parser's reason, then the lines it quotes
 * with a caret under the place (yaml's own excerpt, indented under the issue).
 */
function syntaxIssues(doc: Document, file: string): ConfigIssue[] {
  return doc.errors.map((e) => {
    const start = e.linePos?.[0];
    const path = start ? `${file}:${start.line}:${start.col}` : file;
    if (/Maximum call stack/.test(e.message))
      return { path, message: `nested too deeply to parse (more than ${MAX_NESTING} levels are refused)` };
    const [first = e.message, ...rest] = e.message.split("\n");
    const reason = first.replace(/ at line \d+, column \d+:$/, "");
    const excerpt = rest.filter((line) => line.trim() !== "").map((line) => `    ${line.slice(0, 160)}`);
    return { path, message: [reason, ...excerpt].join("\n") };
  });
}

/** The document's value, with alias expansion capped; an excess becomes a {@link ConfigError}. */
function toValue(doc: Document, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_EXPANSIONS });
  } catch (err) {
    if (err instanceof ReferenceError) {
      const excess = /Excessive alias count/.test(err.message);
      throw new ConfigError(
        [
          {
            path: file,
            message: excess
              ? `aliases expand to more than ${MAX_ALIAS_EXPANSIONS} nodes (an alias bomb?); write the values out or use fewer aliases`
              : err.message,
          },
        ],
        file,
      );
    }
    // A merge key (`<<`) whose value is not a mapping: go-yaml v3 refuses it too ("map merge requires map").
    if (err instanceof Error && /^Merge sources must be/.test(err.message))
      throw new ConfigError([{ path: file, message: `${err.message}: give << a mapping or an alias of one` }], file);
    throw err;
  }
}

/** How a caller wants its YAML read, beyond the checks every file gets. */
export interface YamlReading {
  /**
   * Read with YAML 1.2's core schema even under a `%YAML 1.1` directive (go-yaml v3 accepts the directive and keeps
   * its own rules; the `yaml` library would switch to 1.1's, where `yes` is true and `0:30` is 30).
   * @default false
   */
  readonly coreSchema?: boolean;
  /** More problems of the parsed document (run when it has no syntax errors). @default none */
  readonly moreIssues?: (doc: Document, lines: LineCounter) => ConfigIssue[];
}

/**
 * Parses YAML text (JSON is YAML too) with merge keys; syntax errors, duplicate keys and aliases used inside their
 * own anchor (and what `reading.moreIssues` finds) become one {@link ConfigError} with line numbers.
 */
export function parseYamlText(text: string, file: string, reading: YamlReading = {}): unknown {
  const lines = new LineCounter();
  // Merge keys (`<<: *base`) as Pulumi reads stack files (go-yaml v3 merges them).
  const doc = parseDocument(text, {
    prettyErrors: true,
    uniqueKeys: false,
    lineCounter: lines,
    merge: true,
    ...(reading.coreSchema ? { schema: "core", resolveKnownTags: true } : {}),
  });
  const issues = syntaxIssues(doc, file);
  if (issues.length === 0)
    issues.push(...structureIssues(doc, file, lines), ...(reading.moreIssues?.(doc, lines) ?? []));
  if (issues.length > 0) throw new ConfigError(issues, file);
  return toValue(doc, file);
}
