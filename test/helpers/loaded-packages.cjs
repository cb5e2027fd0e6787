// Preloaded (`node --require`) by test/cli/startup.test.ts: at exit, prints to stderr the npm packages this process
// loaded from node_modules, one line of JSON prefixed with LOADED_PACKAGES.
"use strict";
process.on("exit", () => {
  const names = new Set();
  for (const file of Object.keys(require.cache)) {
    const m = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file);
    if (m) names.add(m[1].replace("\\", "/"));
  }
  process.stderr.write(`\nLOADED_PACKAGES ${JSON.stringify([...names].sort())}\n`);
});
