/**
 * `npm run generate`: writes what is generated from a single definition, and a test fails when a committed copy differs
 * from what this would write (run it and commit the result):
 * - from the runtime contract (workloads/contract/document.ts): the JSON Schema the Python runtime validates with, and
 *   the contract table of docs/runtime.md;
 * - from the run record (core/tune/run-record.ts): the JSON Schema the runtime validates its records with;
 * - from the published memory cases (test/core/memory/published-cases.ts): the table of docs/memory.md;
 * - from the published runs the forecast is calibrated on (test/core/forecast/published-runs.ts): the table of
 *   docs/forecast.md;
 * - from the zod schemas of the configuration, the specs and the contract: their plain TypeScript types, which the
 *   public API exposes instead of zod's (scripts/public-types);
 * - from the diff fixture (test/cli/diff/fixture.ts): the pull-request comment shown in docs/cli.md, as `ray-gpu diff`
 *   renders it (builds nothing itself: run it after `npm run build`, since the diff previews through bin/ray-gpu.js);
 * - from the tune stack and the runs recorded on real Ray (test/cli/tune/samples.ts): the samples docs/tune.md runs
 *   `ray-gpu tune` on, in examples/tune/ (the records with their plan digest set to the current plan's).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stableJson } from "../core/serialize";
import { contractMarkdown, tuningJsonSchema } from "../workloads/contract/json-schema";
import { publishedTable } from "../test/core/memory/published-cases";
import { publishedForecastTable } from "../test/core/forecast/published-runs";
import { docsComment } from "../test/cli/diff/fixture";
import { publicTypeFiles } from "./public-types/generate";
import { runRecordJsonSchema } from "../core/tune/run-record";
import { SAMPLES_DIR, tuneSamples } from "../test/cli/tune/samples";

const root = resolve(__dirname, "..");
export const SCHEMA_FILE = join(root, "runtime/ray_gpu/tuning.schema.json");
export const RUN_RECORD_SCHEMA_FILE = join(root, "runtime/ray_gpu/run_record.schema.json");
export const CONTRACT_DOC = join(root, "docs/runtime.md");
export const MEMORY_DOC = join(root, "docs/memory.md");
export const BEGIN = "<!-- generated: contract table (npm run generate) -->";
export const END = "<!-- end of generated contract table -->";
export const CASES_BEGIN = "<!-- generated: published memory cases (npm run generate) -->";
export const CASES_END = "<!-- end of generated published memory cases -->";
export const FORECAST_DOC = join(root, "docs/forecast.md");
export const FORECAST_BEGIN = "<!-- generated: published forecast runs (npm run generate) -->";
export const FORECAST_END = "<!-- end of generated published forecast runs -->";
export const CLI_DOC = join(root, "docs/cli.md");
export const DIFF_BEGIN = "<!-- generated: diff comment of the fixture (npm run generate) -->";
export const DIFF_END = "<!-- end of generated diff comment -->";

/** `doc` with the section between `begin` and `end` replaced by `table`. */
export function withSection(doc: string, table: string, begin = BEGIN, end = END): string {
  const start = doc.indexOf(begin);
  const stop = doc.indexOf(end);
  if (start < 0 || stop < start) throw new Error(`the document needs the markers ${begin} and ${end}`);
  return `${doc.slice(0, start + begin.length)}\n${table}${doc.slice(stop)}`;
}

/** The generated section of `doc` between `begin` and `end`. */
export function sectionOf(doc: string, begin: string, end: string): string {
  return doc.slice(doc.indexOf(begin) + begin.length + 1, doc.indexOf(end));
}

async function generate(): Promise<void> {
  writeFileSync(SCHEMA_FILE, stableJson(tuningJsonSchema()));
  writeFileSync(RUN_RECORD_SCHEMA_FILE, stableJson(runRecordJsonSchema()));
  writeFileSync(CONTRACT_DOC, withSection(readFileSync(CONTRACT_DOC, "utf8"), contractMarkdown()));
  writeFileSync(MEMORY_DOC, withSection(readFileSync(MEMORY_DOC, "utf8"), publishedTable(), CASES_BEGIN, CASES_END));
  const forecastDoc = readFileSync(FORECAST_DOC, "utf8");
  writeFileSync(FORECAST_DOC, withSection(forecastDoc, publishedForecastTable(), FORECAST_BEGIN, FORECAST_END));
  writeFileSync(CLI_DOC, withSection(readFileSync(CLI_DOC, "utf8"), `${await docsComment()}\n`, DIFF_BEGIN, DIFF_END));
  const types = await publicTypeFiles();
  for (const [path, text] of types) writeFileSync(join(root, path), text);
  const samples = tuneSamples();
  mkdirSync(join(root, SAMPLES_DIR), { recursive: true });
  for (const [path, text] of samples) writeFileSync(join(root, path), text);
  console.log(`wrote ${SCHEMA_FILE}, the tables of ${CONTRACT_DOC}, ${MEMORY_DOC} and ${FORECAST_DOC}`);
  console.log(`and the comment of ${CLI_DOC}`);
  console.log(`and the public types in ${[...types.keys()].join(", ")}`);
  console.log(`and the tune samples ${[...samples.keys()].join(", ")}`);
}

if (require.main === module) void generate();
