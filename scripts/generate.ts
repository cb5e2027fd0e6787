/**
 * `npm run generate`: writes what is generated from the runtime contract's one definition (workloads/contract/document.ts):
 * the JSON Schema the Python runtime validates with, and the contract table of docs/runtime.md. A test fails when the
 * committed copies differ from what this would write (run it and commit the result).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stableJson } from "../core/serialize";
import { contractMarkdown, tuningJsonSchema } from "../workloads/contract/json-schema";

const root = resolve(__dirname, "..");
export const SCHEMA_FILE = join(root, "runtime/ray_gpu/tuning.schema.json");
export const CONTRACT_DOC = join(root, "docs/runtime.md");
export const BEGIN = "<!-- generated: contract table (npm run generate) -->";
export const END = "<!-- end of generated contract table -->";

/** docs/runtime.md with its generated section replaced by `table`. */
export function withContractTable(doc: string, table: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${CONTRACT_DOC} needs the markers ${BEGIN} and ${END}`);
  return `${doc.slice(0, start + BEGIN.length)}\n${table}${doc.slice(end)}`;
}

if (require.main === module) {
  writeFileSync(SCHEMA_FILE, stableJson(tuningJsonSchema()));
  writeFileSync(CONTRACT_DOC, withContractTable(readFileSync(CONTRACT_DOC, "utf8"), contractMarkdown()));
  console.log(`wrote ${SCHEMA_FILE} and the contract table of ${CONTRACT_DOC}`);
}
