// Lint: typescript-eslint's recommended rules, plus the layering rule: core/ and workloads/ are pure and
// never import Pulumi (a pure core decides; thin components create).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      "out/",
      ".venv/",
      ".venv-ray/",
      "test/**/__snapshots__/",
      "test/package/consumer/",
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
    files: ["bin/*.js", "bench/*.js", "test/helpers/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", process: "readonly", console: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
