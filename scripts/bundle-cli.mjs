// Bundles the `ray-gpu` CLI into one CommonJS file, dist/cli/bin/main.cjs, which bin/ray-gpu.js loads. One file
// starts faster than the ~500 modules it replaces (zod, yaml, commander and our own): see bench/ and README.md.
// Every command is in it, `preview` and the Pulumi program it runs included, so an error thrown anywhere is one of the
// bundle's own classes (a ConfigError from a second copy of core/ would not be `instanceof` the CLI's). The Pulumi SDK
// and providers stay outside, loaded from node_modules only when `preview` runs; esbuild initializes each bundled
// module on first use, so the other commands never run the program's code.
import { build } from "esbuild";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * zod's classic entry re-exports its 40-odd locales as one namespace (`z.locales`), about 390 KB that every start would
 * parse. Our messages are English, zod's default, which zod loads by itself from `locales/en.js`; so in the bundle the
 * locales index holds `en` only. Nothing here uses `z.locales` (test/cli checks the messages).
 */
const englishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes("node_modules/zod/") ? { path: "zod-locales", namespace: "zod-en" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-en" }, () => ({
      contents: `export { default as en } from "zod/v4/locales/en.js";`,
      resolveDir: root,
    }));
  },
};

await build({
  absWorkingDir: root,
  entryPoints: ["cli/main.ts"],
  outfile: "dist/cli/bin/main.cjs",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // ESM builds of the dependencies where they have one; identifiers are kept, so an internal error stays readable.
  mainFields: ["module", "main"],
  external: ["@pulumi/*"],
  legalComments: "eof",
  plugins: [englishOnly],
  logLevel: "warning",
});
