// Preloaded into a benchmarked node process (`node -r bench/usage.cjs ...`, so ours and cdk8s are measured alike): at
// exit it appends the process's own CPU seconds (user + system, every thread, the garbage collector's included) and its
// peak resident memory (getrusage's ru_maxrss) as one JSON line to the file named by BENCH_USAGE_FILE.
"use strict";
const { appendFileSync } = require("node:fs");

const file = process.env.BENCH_USAGE_FILE;
if (file)
  process.on("exit", () => {
    const u = process.resourceUsage();
    const line = { cpuS: (u.userCPUTime + u.systemCPUTime) / 1e6, peakRssMiB: u.maxRSS / 1024 };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  });
