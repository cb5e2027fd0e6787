#!/usr/bin/env node
// Entry point of the `ray-gpu` CLI: the compiled, bundled CLI in dist/cli/bin/main.cjs (built by `npm ci`/`npm install`
// through `prepare`, or by `npm run build`; see scripts/bundle-cli.mjs).
"use strict";
let cli;
try {
  cli = require("../dist/cli/bin/main.cjs");
} catch (err) {
  if (err && err.code === "MODULE_NOT_FOUND" && String(err.message).includes("dist/cli/bin/main.cjs")) {
    console.error("ray-gpu: the CLI is not built: run `npm run build` in the package folder");
    process.exit(70);
  }
  throw err;
}
cli.main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    // Last resort: an internal bug. Input problems never reach this point (they exit 1 with a message).
    console.error(`ray-gpu: internal error: ${err && err.message ? err.message : String(err)}`);
    process.exitCode = 70;
  },
);
