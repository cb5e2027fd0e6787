#!/usr/bin/env node
// Entry point of the `ray-gpu` CLI. The CLI is written in TypeScript; tsx compiles it on the fly so
// `npx ray-gpu` works right after `npm ci`, with no build step.
"use strict";
require("tsx/cjs");
require("../cli/main.ts")
  .main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      // Last resort: an internal bug. Input problems never reach this point (they exit 1 with a message).
      console.error(`ray-gpu: internal error: ${err && err.message ? err.message : String(err)}`);
      process.exitCode = 70;
    },
  );
