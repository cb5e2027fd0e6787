// Writes dist/cli/bin/main.cjs.cache, V8's code cache of the bundled CLI (see bin/ray-gpu.js, which uses it): runs one
// render of the repository's dev stack into a temporary folder, so the cache holds the functions a render compiles,
// then the CLI writes the bundle's SHA-256 and the cached data. Run by `npm run build` after the bundle is made; a
// cache is only ever used by the Node version that made it (V8 checks), for the bundle it was made for (the digest).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { env, execPath, exit, stderr } from "node:process";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cache = join(root, "dist", "cli", "bin", "main.cjs.cache");
const work = mkdtempSync(join(tmpdir(), "ray-gpu-code-cache-"));
rmSync(cache, { force: true });
try {
  const args = [join(root, "bin", "ray-gpu.js"), "-C", root, "render", "--stack", "dev", "--out", join(work, "dev")];
  const run = spawnSync(execPath, args, {
    env: { ...env, RAY_GPU_BUILD_CODE_CACHE: cache },
    encoding: "utf8",
  });
  if (run.status !== 0) {
    stderr.write(`code cache: the render failed (exit ${run.status}):\n${run.stderr}`);
    exit(1);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
