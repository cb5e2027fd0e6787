/**
 * `npx tsx scripts/record-report-sample.ts`: records the sample `ray-gpu report --recording` replays,
 * examples/report/prod-llm-pretrain.recording.json. It starts a real Prometheus (promtool and prometheus on the PATH,
 * as the report tests need) loaded with the synthetic series of test/helpers/report-fixtures.ts, runs
 * `ray-gpu report --stack prod --job llm-pretrain --to <the fixture's end> --save-recording` against it (default
 * lookback), and writes the recording with its `source` saying what it is: synthetic series, not a measured run.
 * test/cli/report/report.test.ts fails when the committed sample differs from what this would write: run it again and
 * commit the result.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stableJson } from "../core/serialize";
import { repoRoot } from "../test/helpers/fixtures";
import { END, prodPrometheus } from "../test/helpers/report-fixtures";
import { runMain } from "../test/helpers/run-main";

/** The sample, relative to the repository root. */
export const SAMPLE_FILE = "examples/report/prod-llm-pretrain.recording.json";

/** The sample's provenance, as its `source` field says it. */
export const sampleSource = (prometheusVersion: string) =>
  `synthetic series of the TRAIN fixture of test/helpers/report-fixtures.ts (prod's llm-pretrain: 4 workers x 8 ` +
  `GPUs for an hour, one worker at 80% GPU utilization, the rest at 97%) served by Prometheus ${prometheusVersion}; ` +
  `not a measured run`;

/** The version the server at `url` says it is (`/api/v1/status/buildinfo`). */
async function versionOf(url: string): Promise<string> {
  const body = (await (await fetch(`${url}/api/v1/status/buildinfo`)).json()) as { data: { version: string } };
  return body.data.version;
}

/** The sample's text, recorded from the fixture's Prometheus at `url`. */
export async function recordSample(url: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-report-sample-"));
  try {
    const file = join(dir, "sample.json");
    const argv = ["report", "--stack", "prod", "--job", "llm-pretrain", "--prometheus", url, "--to", String(END)];
    const run = await runMain([...argv, "--save-recording", file]);
    if (run.code !== 0) throw new Error(`ray-gpu ${argv.join(" ")} exited ${run.code}: ${run.err}`);
    const recording = JSON.parse(readFileSync(file, "utf8")) as { source: string };
    return stableJson({ ...recording, source: sampleSource(await versionOf(url)) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const prometheus = await prodPrometheus();
  try {
    const path = resolve(repoRoot, SAMPLE_FILE);
    writeFileSync(path, await recordSample(prometheus.url));
    console.log(`wrote ${path}`);
  } finally {
    await prometheus.stop();
  }
}

if (require.main === module)
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
