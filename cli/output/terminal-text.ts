/**
 * Text from elsewhere (a server's error message, a label value such as a pod name, a field of a file) made safe to
 * print on a terminal: a control character in it could move the cursor, rewrite the line, set the window title or
 * hide what follows (ESC starts a terminal escape sequence, CR returns to the line's start, U+009B is the one-byte
 * CSI), and a bidirectional override could show it in another order than it is read. Each such character is shown as
 * an escape instead (`\x1b`, `\x0d`, `\u202e`), so the text stays readable and nothing it holds is acted on.
 */

/** C0 controls, DEL and C1 controls, and the Unicode bidirectional embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;
/** What JSON text may still hold raw: DEL, C1 and bidirectional controls (JSON.stringify escapes C0 itself). */
const UNPRINTABLE_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

/** The escape of a character {@link UNPRINTABLE} matched: `\xNN` below U+0100, `\uNNNN` above. */
function escapeOf(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with every control character (C0, DEL, C1) and bidirectional control shown as an escape. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escapeOf);
}

/**
 * JSON text (`stableJson`'s) made safe for a terminal without changing what it means: JSON.stringify escapes C0
 * controls itself (its line breaks and indentation stay), but writes DEL, C1 controls and bidirectional controls as
 * they are; outside strings JSON holds none, and inside one `\u009b` is the same string as the raw character.
 */
export function printableJson(json: string): string {
  return json.replace(UNPRINTABLE_IN_JSON, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** C0 controls but tab and line feed (which the CLI's own text uses): never raw in JSON text either. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const C0_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f]/gu;

/**
 * Everything the CLI prints, made safe on its way out (cli/main.ts wraps its output in this), whatever path the text
 * took from a file, a server or an argument: C0 controls but tab and line feed become `\xNN` (JSON.stringify never
 * leaves them raw, so JSON output is unchanged), and DEL, C1 and bidirectional controls become `\uNNNN`, which inside a
 * JSON string is the same string and elsewhere reads as what it is. The CLI itself writes no escape sequences.
 */
export function terminalSafe(text: string): string {
  return printableJson(text.replace(C0_BUT_LAYOUT, escapeOf));
}
