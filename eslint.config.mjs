// Lint: typescript-eslint's recommended rules; the shape rules over the whole tree (functions of at most 60 lines, at
// most 4 parameters, no import circle); and the layering rule: core/ and workloads/ are pure and never import Pulumi
// (a pure core decides; thin components create).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import importX from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import shape from "./scripts/eslint/shape-rules.mjs";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      "out/",
      ".venv/",
      ".venv-ray",
      "test/**/__snapshots__/",
      "test/package/consumer/",
      // A circle test/scripts/lint-shape.test.ts plants and removes (linted there with ignores off).
      "test/scripts/.cycle-*/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Layout is Prettier's (npm run format); ESLint keeps to correctness.
  prettier,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // The shape rules, everywhere: a function is read at once; more than 4 arguments become one object; no circle.
    files: ["**/*.ts", "**/*.mjs"],
    plugins: { "import-x": importX, shape },
    settings: {
      // import-x follows only files with these extensions (its default is .js alone, which sees no circle here).
      "import-x/extensions": [".ts", ".mjs", ".js"],
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "tsconfig.json" })],
    },
    rules: {
      "shape/max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }],
      "max-params": ["error", 4],
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
    },
  },
  {
    files: ["core/**/*.ts", "workloads/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@pulumi/*"],
              message: "core/ and workloads/ are pure: no Pulumi imports. Put resources in components/.",
            },
            {
              group: ["**/components/**", "**/stacks/**", "**/cli/**"],
              message: "core/ and workloads/ must not depend on outer layers.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["bin/*.js", "bench/*.js", "bench/*.cjs", "test/helpers/*.cjs", ".dependency-cruiser.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: {
        require: "readonly",
        process: "readonly",
        console: "readonly",
        module: "readonly",
        __dirname: "readonly",
      },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
