#!/usr/bin/env node
// Entry point of the `ray-gpu` CLI: the compiled, bundled CLI in dist/cli/bin/main.cjs (built by `npm ci`/`npm install`
// through `prepare`, or by `npm run build`; see scripts/bundle-cli.mjs).
//
// The bundle is compiled with V8's code cache when the build left one for this very bundle (main.cjs.cache, written by
// scripts/code-cache.mjs: the SHA-256 of the bundle, then V8's cached data after a render). V8 rejects a cache made by
// another Node version or with other flags, and the digest rules out one made for another bundle; either way the
// bundle is then compiled as without one. The cache spares each start the compilation of the functions a render runs.
"use strict";
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

/** Runs the bundle as a CommonJS module, compiled with its code cache when there is one: its exports and script. */
function loadBundle() {
  const source = bundleSource();
  const digest = createHash("sha256").update(source).digest("hex");
  const script = new vm.Script(Module.wrap(source), {
    filename: bundle,
    cachedData: cachedData(digest),
    importModuleDynamically: vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const mod = new Module(bundle, module);
  mod.filename = bundle;
  mod.paths = Module._nodeModulePaths(dirname(bundle));
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(bundle), mod, bundle, dirname(bundle));
  mod.loaded = true;
  return { cli: mod.exports, script, digest };
}

/** scripts/code-cache.mjs sets this variable to the file to write the cache into, after one run of the CLI. */
function writeCache(script, digest) {
  const out = process.env.RAY_GPU_BUILD_CODE_CACHE;
  if (out) writeFileSync(out, Buffer.concat([Buffer.from(digest, "latin1"), script.createCachedData()]));
}

const { cli, script, digest } = loadBundle();
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
