/**
 * Elements as functions, so the pages' markup reads as a tree instead of long template strings. Attribute values and
 * bodies are written as given: callers escape text with `esc` (./html-page), numbers and our own identifiers need none.
 */

/** Attributes in the order they are written. */
export type Attrs = Readonly<Record<string, string | number>>;

const attrText = (attrs: Attrs) =>
  Object.entries(attrs)
    .map(([name, value]) => ` ${name}="${value}"`)
    .join("");

/** `<name attrs>body</name>`. */
export const el = (name: string, attrs: Attrs, body = "") => `<${name}${attrText(attrs)}>${body}</${name}>`;

/** `<name attrs/>`: an SVG element without children. */
export const leaf = (name: string, attrs: Attrs) => `<${name}${attrText(attrs)}/>`;

/** A table row: each cell in `<td>` (or `cell`). */
export const tableRow = (cells: readonly string[], cell: "td" | "th" = "td") =>
  `<tr>${cells.map((c) => `<${cell}>${c}</${cell}>`).join("")}</tr>`;

/** A table: a header row of `headers`, then `rows` (already rendered). */
export const htmlTable = (headers: readonly string[], rows: string) =>
  `<table>${tableRow(headers, "th")}${rows}</table>`;
