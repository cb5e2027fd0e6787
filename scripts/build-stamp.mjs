// The stamp of a build of dist/: a SHA-256 of everything the build reads (the sources tsconfig.build.json includes,
// the two tsconfigs, the bundler script and the lockfile), kept in dist/.build-stamp.
//   node scripts/build-stamp.mjs write   after a build (npm run build does it)
//   node scripts/build-stamp.mjs check   exit 0 when dist/ was built from exactly these files, 1 otherwise
// The test setup builds only when the check fails, so a process that runs the CLI while the tests start (CI runs
// npm test and npm run test:ray side by side) never sees dist/ half rewritten.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { argv, exit, stderr } from "node:process";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const stampFile = join(root, "dist", ".build-stamp");
const SOURCES = ["index.ts", "core", "workloads", "components", "io", "cli", "stacks", "policy"];
const INPUTS = [
  "tsconfig.json",
  "tsconfig.build.json",
  "scripts/bundle-cli.mjs",
  "scripts/code-cache.mjs",
  "package-lock.json",
];

/** `path` (relative to the root) if it is a file, else every file under it, sorted by code point. */
function files(path) {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

export function stamp() {
  const hash = createHash("sha256");
  for (const file of [...SOURCES.flatMap(files).filter((f) => /\.(ts|json)$/.test(f)), ...INPUTS]) {
    hash.update(file + "\0");
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

const command = argv[2];
if (command === "write") writeFileSync(stampFile, stamp() + "\n");
else if (command === "check") exit(existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === stamp() ? 0 : 1);
else {
  stderr.write("usage: node scripts/build-stamp.mjs write|check\n");
  exit(2);
}
