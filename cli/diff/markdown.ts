/**
 * The Markdown view of `ray-gpu diff`, for a pull-request comment: the summary line in bold, the rules that fired, then
 * the replacements and deletions of stateful resources (loud, never cut), then per stack one collapsible section per
 * re-planned workload and one for the platform's resources. Cut, with a note, to stay under GitHub's comment limit.
 */
import {
  addedNoFit,
  describe,
  resourceHeadline,
  resourceLines,
  summaryLine,
  workloadLines,
  type StackReport,
} from "./summary";
import { statefulLosses, type ResourceChange } from "./resources";

/**
 * Longest Markdown this writes. GitHub refuses comment bodies over 65,536 characters ("Body is too long (maximum is
 * 65536 characters)"), and counts in a way that is not JavaScript's `.length` (its storage limit is in 4-byte
 * characters), so stay at 60,000, as changesets/action does (pulumi/actions uses 64,000).
 */
export const COMMENT_LIMIT = 60_000;

const fold = (summary: string, lines: readonly string[]) =>
  lines.length
    ? `<details><summary>${summary}</summary>\n\n\`\`\`\n${lines.join("\n")}\n\`\`\`\n</details>`
    : `- ${summary}`;

/** Stateful resources replaced or deleted, each on its own loud line naming its stack (at the top: never cut). */
const lossLines = (stacks: readonly StackReport[]) =>
  stacks.flatMap((s) =>
    statefulLosses(s.resources ?? []).map((c) => `- :warning: **${s.stack}: ${resourceHeadline(c)}**`),
  );

/** Every changed resource, folded under a count per status. */
function resourcesFold(resources: readonly ResourceChange[] | null, notPreviewed: string | undefined): string[] {
  if (resources === null) return [`- platform resources: not previewed (${notPreviewed ?? "`--no-preview`"})`];
  if (resources.length === 0) return ["- platform resources: no change"];
  const count = (s: ResourceChange["status"]) => resources.filter((c) => c.status === s).length;
  const title =
    `Platform resources: ${count("replaced")} replaced, ${count("updated")} updated, ` +
    `${count("added")} added, ${count("removed")} removed`;
  return [fold(title, resources.flatMap(resourceLines))];
}

/** One stack's parts, each a unit the cut keeps or drops whole. */
function stackMarkdown({ stack, diff, resources, notPreviewed }: StackReport): string[] {
  return [
    `### Stack \`${stack}\``,
    ...diff.added.map((n) => `- added workload \`${n}\`${addedNoFit(diff, n)}`),
    ...diff.removed.map((n) => `- removed workload \`${n}\``),
    ...diff.changed.map((c) => {
      const [first, ...rest] = workloadLines(c);
      return fold(first!, rest);
    }),
    ...diff.pools.map(
      (p) =>
        `- pool \`${p.name}\` ${p.status}: ${p.changes.map(describe).join(", ")}` +
        (p.capacityNote ? ` (${p.capacityNote})` : ""),
    ),
    ...resourcesFold(resources, notPreviewed),
    "",
  ];
}

/** The Markdown view for a PR comment; cut (with a note) to stay under {@link COMMENT_LIMIT}. */
export function diffMarkdown(stacks: readonly StackReport[], fired: readonly string[]): string {
  const head = [`**${summaryLine(stacks)}**`, ...fired.map((f) => `- :x: ${f}`), ...lossLines(stacks), ""].join("\n");
  const sections = stacks.flatMap(stackMarkdown);
  const note = "\n_(cut to fit GitHub's comment limit: run `ray-gpu diff` for the rest)_\n";
  const full = [head, ...sections].join("\n");
  if (full.length <= COMMENT_LIMIT) return full;
  let text = head;
  // A part too long for what is left is dropped, and later shorter ones still get in (stack headers among them).
  for (const s of sections) {
    if (text.length + s.length + 1 + note.length > COMMENT_LIMIT) continue;
    text += `\n${s}`;
  }
  return text + note;
}
