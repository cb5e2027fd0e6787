/**
 * The offline preview of one stack, run in a child process of this same CLI (`ray-gpu preview --json`): Pulumi's mock
 * runtime is process-global and the program registers its resources once per process, so the base and the working
 * tree each get their own. Both run this installation's program: the diff shows what the config change does.
 *
 * With `RAY_GPU_PREVIEW_CACHE` naming a folder, a preview that succeeded is kept there, keyed by everything it reads:
 * the build of this installation (`dist/.build-stamp`, a hash of every source the build reads; without it nothing is
 * kept), the stack's name, its stack file and the folder's Pulumi.yaml. A test run or a CI job that previews the same
 * stack file many times runs the program once for it.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ConfigError } from "../../core/errors";
import type { PreviewResource } from "../preview/run";

/** `bin/ray-gpu.js` of this installation, found from this file (source, compiled or bundled). */
export function cliEntry(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "bin", "ray-gpu.js");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`the CLI entry is missing: no bin/ray-gpu.js above ${from}`);
  }
}

/** Longest a preview may take before it is stopped (a hang detector: one takes a few seconds). */
const PREVIEW_TIMEOUT_MS = 5 * 60_000;

/** The SHA-256 of a file's bytes, or "absent". */
const digestOf = (file: string) =>
  existsSync(file) ? createHash("sha256").update(readFileSync(file)).digest("hex") : "absent";

/** Where a preview of `stack` in `dir` is kept, or undefined when no cache is set or this build has no stamp. */
function cachePath(dir: string, stack: string): string | undefined {
  const cache = process.env["RAY_GPU_PREVIEW_CACHE"];
  const stamp = join(dirname(dirname(cliEntry())), "dist", ".build-stamp");
  if (!cache || !existsSync(stamp)) return undefined;
  const files = [stamp, join(dir, `Pulumi.${stack}.yaml`), join(dir, "Pulumi.yaml")];
  const inputs = [stack, ...files.map(digestOf)];
  return join(cache, `preview-${stack}-${createHash("sha256").update(inputs.join("\n")).digest("hex")}.json`);
}

/** The kept preview of `stack` in `dir`, or a new one (kept when a cache is set). */
async function cachedPreview(dir: string, stack: string, label: string): Promise<PreviewResource[]> {
  const path = cachePath(dir, stack);
  if (path && existsSync(path)) return JSON.parse(readFileSync(path, "utf8")) as PreviewResource[];
  const resources = await previewIn(dir, stack, label);
  if (path) {
    mkdirSync(dirname(path), { recursive: true });
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, JSON.stringify(resources));
    renameSync(partial, path); // whole or not at all, for a reader in another process
  }
  return resources;
}

/**
 * Runs `ray-gpu preview --json` in `dir`. Exit 1 is the stack's problem (a ConfigError named `label`); any other
 * failure (a crash, a signal, the time limit, output that is not the JSON document) is an Error.
 */
function previewIn(dir: string, stack: string, label: string): Promise<PreviewResource[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliEntry(), "-C", dir, "preview", "--stack", stack, "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
      timeout: PREVIEW_TIMEOUT_MS,
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const said = err.trim().split("\n").slice(0, 20).join("\n");
      if (code === 1)
        return reject(new ConfigError([{ path: label, message: `the offline preview failed: ${said}` }], label));
      if (code !== 0)
        return reject(new Error(`the offline preview of ${label} ended with ${signal ?? `exit ${code}`}: ${said}`));
      try {
        resolve((JSON.parse(out) as { resources: PreviewResource[] }).resources);
      } catch (e) {
        reject(new Error(`the offline preview of ${label} printed no JSON document: ${String(e)}`));
      }
    });
  });
}

/**
 * The preview of a stack file's text (the base's), with its project file's where the base has one, from a temporary
 * folder that is removed afterwards.
 */
export async function previewText(
  texts: { readonly stack: string; readonly project: string | undefined },
  stack: string,
  label: string,
): Promise<PreviewResource[]> {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-diff-base-"));
  try {
    writeFileSync(join(dir, `Pulumi.${stack}.yaml`), texts.stack);
    if (texts.project !== undefined) writeFileSync(join(dir, "Pulumi.yaml"), texts.project);
    return await cachedPreview(dir, stack, label);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The preview of `Pulumi.<stack>.yaml` in `dir` (the working tree's). */
export function previewDir(dir: string, stack: string): Promise<PreviewResource[]> {
  return cachedPreview(dir, stack, join(dir, `Pulumi.${stack}.yaml`));
}
