/**
 * Import circles, type-only imports counted: `import type` does not reach the emitted JavaScript, but a circle through
 * one still ties the modules' meanings together (ESLint's import-x/no-cycle skips them). `npm run lint` runs it over
 * every source folder; test/scripts/cycles.test.ts plants a type-only circle and a value one to show it sees both.
 * @type {import("dependency-cruiser").IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle, type-only imports counted: break it by moving the shared definition down a floor.",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Count `import type` (and imports of declarations only) as the dependencies they are in the source.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|test/scripts/\\.cycle-[^/]*)/" },
    moduleSystems: ["es6", "cjs"],
  },
};
