/**
 * The pieces both HTML pages (`report --html`, `plan --html`) are made of: one self-contained page (inline CSS and
 * SVG, no script, nothing fetched), escaped text, and numbers marked with the JSON path they come from
 * (`data-key`), so a test can check every number shown against the JSON document.
 */
import { createHash } from "node:crypto";
import type { OwnedFormat } from "./file";

/** Text made safe for HTML. */
export const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A number as shown, marked with its JSON path: `<span data-key="gpuMemory.peakGiB">16.895</span>`. */
export const num = (key: string, value: number | null, unit = "") =>
  `<span class="num" data-key="${esc(key)}">${value === null ? "-" : String(value)}</span>${unit ? `&#8239;${esc(unit)}` : ""}`;

/** Colors for series, in order (distinct on white, for color-blind readers too: Okabe-Ito). */
export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"];

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1f24; margin: 24px; max-width: 1100px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.verdict { padding: 10px 14px; border-radius: 6px; margin: 12px 0 20px; font-weight: 600; }
.kept { background: #e6f4ea; border: 1px solid #9ad0a8; } .short { background: #fdecea; border: 1px solid #f1a7a0; }
table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 4px 12px 4px 0; text-align: left; vertical-align: top; }
th { font-weight: 600; color: #57606a; border-bottom: 1px solid #d0d7de; } .num { font-variant-numeric: tabular-nums; }
svg text { font: 12px system-ui, sans-serif; fill: #1b1f24; } .muted { color: #57606a; } .legend span { margin-right: 14px; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; vertical-align: middle; }
`;

/** The mark of a page `ray-gpu` wrote, with the page's own digest in it (see {@link HTML_PAGE}). */
const GENERATOR = '<meta name="generator" content="ray-gpu" data-sha256="';
const DIGEST_HEX = 64;
/** The blank digest: a page's digest is taken with this in its place. */
const BLANK = "0".repeat(DIGEST_HEX);
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** Where the digest of `text`'s generator mark starts, or -1 when it has no mark. */
function digestAt(text: string): number {
  const at = text.indexOf(GENERATOR);
  return at < 0 ? -1 : at + GENERATOR.length;
}

/** `text` with the digest starting at `start` replaced by `digest`. */
const withDigest = (text: string, start: number, digest: string) =>
  `${text.slice(0, start)}${digest}${text.slice(start + DIGEST_HEX)}`;

/**
 * The pages `--html` writes, and how a file is known to be one: its generator mark carries the SHA-256 of the whole
 * page (taken with the digest blanked), so only a page ray-gpu wrote, unchanged since, is ever replaced. A file that
 * merely quotes the mark (docs/cli.md does, and so could a stack file's comment) or a page edited by hand is not.
 */
export const HTML_PAGE: OwnedFormat = {
  what: "a page ray-gpu wrote (unchanged since)",
  owns(text: string): boolean {
    const start = digestAt(text);
    if (start < 0) return false;
    const digest = text.slice(start, start + DIGEST_HEX);
    return (
      /^[0-9a-f]{64}$/.test(digest) &&
      text.startsWith('">', start + DIGEST_HEX) &&
      sha256(withDigest(text, start, BLANK)) === digest
    );
  },
};

/** `page` (its digest blank) with its digest filled in. */
const stamped = (page: string) => withDigest(page, digestAt(page), sha256(page));

/** The whole page around `body`, stamped with its digest. */
export function page(title: string, body: string): string {
  return stamped(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${GENERATOR}${BLANK}">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`);
}

/** A legend: a swatch and a label per series. */
export const legend = (items: readonly { label: string; color: string }[]) =>
  `<div class="legend">${items.map((i) => `<span>${swatch(i.color)}${esc(i.label)}</span>`).join("")}</div>`;

/** A series' color, as the legend shows it. */
const swatch = (color: string) => `<i class="swatch" style="background:${color}"></i>`;
