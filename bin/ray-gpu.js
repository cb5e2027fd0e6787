#!/usr/bin/env node
// Entry point of the `ray-gpu` CLI: the compiled, bundled CLI in dist/cli/bin/main.cjs (built by `npm ci`/`npm install`
// through `prepare`, or by `npm run build`; see scripts/bundle-cli.mjs).
//
// The bundle is compiled with V8's code cache when the build left one for this very bundle (main.cjs.cache, written by
// scripts/code-cache.mjs: the SHA-256 of the bundle, then V8's cached data after a render). V8 rejects a cache made by
// another Node version or with other flags, and the digest rules out one made for another bundle; either way the
// bundle is then compiled as without one. The cache spares each start the compilation of the functions a render runs.
//
// V8's optimizing compiler (TurboFan) tiers a function up once it has run for its interrupt budget, 66 KiB of bytecode
// in Node 20. A command runs for well under a second, so most of what it optimized was compiled on a background thread
// and then hardly run: a render of 100 workloads spent about a quarter of its CPU that way. A budget of 1 MiB leaves
// optimization to the code that runs long. Measured by bench/tiering.bench.ts (npm run bench:tiering) against the
// default budget, in alternating pairs: 0.71x the CPU at 100 workloads, 0.86x at 1,000, 1.02x at 5,000. The flag only
// moves when V8 tiers up, so it is set before the bundle is compiled (a cache is made and used under the same flags);
// a budget given to node on its command line is kept.
"use strict";
if (!process.execArgv.some((a) => a.startsWith("--interrupt-budget")))
  require("node:v8").setFlagsFromString("--interrupt-budget=1048576");
const { Buffer } = require("node:buffer");
const { readFileSync, writeFileSync } = require("node:fs");
const { createHash } = require("node:crypto");
const { dirname, join } = require("node:path");
const Module = require("node:module");
const vm = require("node:vm");

const bundle = join(__dirname, "..", "dist", "cli", "bin", "main.cjs");
const cacheFile = `${bundle}.cache`;
const DIGEST_BYTES = 64;

/** The bundle's source, or exit 70 with how to build it. */
function bundleSource() {
  try {
    return readFileSync(bundle, "utf8");
  } catch (err) {
    if (err && err.code === "ENOENT") {
      console.error("ray-gpu: the CLI is not built: run `npm run build` in the package folder");
      process.exit(70);
    }
    throw err;
  }
}

/** V8's cached data for the bundle whose SHA-256 is `digest`, if the build left it; else undefined. */
function cachedData(digest) {
  try {
    const file = readFileSync(cacheFile);
    return file.subarray(0, DIGEST_BYTES).toString("latin1") === digest ? file.subarray(DIGEST_BYTES) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs the bundle as a CommonJS module, compiled with its code cache when there is one: its exports and script, the
 * bundle's digest, and whether a cache for it was handed to V8.
 */
function loadBundle() {
  const source = bundleSource();
  const digest = createHash("sha256").update(source).digest("hex");
  const cached = cachedData(digest);
  const script = new vm.Script(Module.wrap(source), {
    filename: bundle,
    cachedData: cached,
    importModuleDynamically: vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const mod = new Module(bundle, module);
  mod.filename = bundle;
  mod.paths = Module._nodeModulePaths(dirname(bundle));
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(bundle), mod, bundle, dirname(bundle));
  mod.loaded = true;
  return { cli: mod.exports, script, digest, cached: cached !== undefined };
}

/**
 * With RAY_GPU_CODE_CACHE_STATUS set, says on stderr what V8 did with the code cache: accepted, rejected (made by
 * another Node or under other flags), or none (no cache for this bundle). test/cli/startup.test.ts reads it.
 */
function reportCache(script, cached) {
  if (!process.env.RAY_GPU_CODE_CACHE_STATUS) return;
  const status = !cached ? "none" : script.cachedDataRejected ? "rejected" : "accepted";
  process.stderr.write(`ray-gpu: code cache ${status}\n`);
}

/** scripts/code-cache.mjs sets this variable to the file to write the cache into, after one run of the CLI. */
function writeCache(script, digest) {
  const out = process.env.RAY_GPU_BUILD_CODE_CACHE;
  if (out) writeFileSync(out, Buffer.concat([Buffer.from(digest, "latin1"), script.createCachedData()]));
}

const { cli, script, digest, cached } = loadBundle();
reportCache(script, cached);
cli.main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    writeCache(script, digest);
  },
  (err) => {
    // Last resort: an internal bug. Input problems never reach this point (they exit 1 with a message).
    console.error(`ray-gpu: internal error: ${err && err.message ? err.message : String(err)}`);
    process.exitCode = 70;
  },
);
