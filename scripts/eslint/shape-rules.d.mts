// Types of the local ESLint plugin (./shape-rules.mjs) for the TypeScript that imports it (its test).
import type { ESLint } from "eslint";
declare const plugin: ESLint.Plugin;
export default plugin;
