/**
 * `ray-gpu preview --program DIR`: any Pulumi program, run the way the Pulumi CLI's Node.js language host runs it
 * (pulumi/pulumi sdk/nodejs/cmd/run/run.ts): its entry from Pulumi.yaml `main`, else package.json, else `index.js` or
 * `index.ts`; a TypeScript entry through the project's own `typescript` and `ts-node` (else the ones vendored in its
 * `@pulumi/pulumi`), with its tsconfig.json; the working directory the project's. Offline under Pulumi's mocks, set on
 * the program's own `@pulumi/pulumi` (a project's node_modules has its own copy), then the deploy simulation.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { ConfigError } from "../../core/errors";
import { versionBelow } from "../../core/config/pip";
import { parsePulumiYamlText } from "../input/pulumi-yaml";
import { pulumiConfigMap } from "../input/stack-file";
import { UsageError } from "../io";
import { installPreviewMocks, settlePreview, type PulumiSdk } from "./mocks";
import { simulated, type PreviewResource } from "./run";

/** The stack name a program sees when no `--stack` is given. */
export const DEFAULT_PROGRAM_STACK = "preview";

/** The part of Pulumi.yaml read here. */
interface ProjectFile {
  readonly name: string;
  readonly main: string | undefined;
  /** `runtime.options.typescript`: false turns ts-node off. @default true */
  readonly typescript: boolean;
}

function readProject(root: string): ProjectFile {
  const file = ["Pulumi.yaml", "Pulumi.yml"].map((f) => join(root, f)).find(existsSync);
  if (!file) throw new UsageError(`${root} has no Pulumi.yaml: --program takes the folder of a Pulumi project`);
  // Read as Pulumi reads it (go-yaml v3): a value the two readers read apart is refused.
  const doc = (parsePulumiYamlText(readFileSync(file, "utf8"), file) ?? {}) as {
    name?: string;
    main?: string;
    runtime?: string | { name?: string; options?: { typescript?: boolean } };
  };
  const runtime = typeof doc.runtime === "string" ? doc.runtime : doc.runtime?.name;
  if (runtime !== "nodejs")
    throw new UsageError(`${file}: runtime is ${String(runtime)}; preview --program runs nodejs programs only`);
  const options = typeof doc.runtime === "object" ? doc.runtime.options : undefined;
  return { name: doc.name ?? "project", main: doc.main, typescript: options?.typescript !== false };
}

/** The program's entry: `main` (a file, or a folder with index.js / index.ts), as run.ts resolves it. */
function entryOf(root: string, main: string | undefined): string {
  const pkgFile = join(root, "package.json");
  const pkg = existsSync(pkgFile) ? (JSON.parse(readFileSync(pkgFile, "utf8")) as { main?: string }) : {};
  const path = resolve(root, main ?? pkg.main ?? ".");
  if (existsSync(path) && statSync(path).isFile()) return path;
  const index = ["index.js", "index.ts"].map((f) => join(path, f)).find(existsSync);
  if (!index) throw new UsageError(`no program in ${path}: it has no index.js or index.ts`);
  return index;
}

/** The program's `@pulumi/pulumi`, resolved from its folder as its own `require` would. */
function programSdk(root: string): { sdk: PulumiSdk; require: NodeJS.Require } {
  const req = createRequire(join(root, "index.js"));
  try {
    req.resolve("@pulumi/pulumi");
  } catch {
    throw new UsageError(`${root}: @pulumi/pulumi is not installed there (run npm install in the project)`);
  }
  const runtime = (req("@pulumi/pulumi") as { runtime: PulumiSdk["runtime"] }).runtime;
  const settings = req("@pulumi/pulumi/runtime/settings") as PulumiSdk["settings"];
  return { sdk: { runtime, settings }, require: req };
}

interface TsUtils {
  typeScriptRequireStrings(): { tsnodeRequire: string; typescriptRequire: string };
  loadTypeScriptCompilerOptions(path: string): Record<string, unknown>;
}

/** ts-node registered as run.ts registers it for a CommonJS program (cwd: the project). */
function registerTypeScript(req: NodeJS.Require): void {
  const tsutilsPath = req.resolve("@pulumi/pulumi/tsutils");
  const tsutils = req(tsutilsPath) as TsUtils;
  const fromSdk = createRequire(tsutilsPath);
  const tsconfig = process.env["PULUMI_NODEJS_TSCONFIG_PATH"] ?? "tsconfig.json";
  const compilerOptions = tsutils.loadTypeScriptCompilerOptions(tsconfig);
  const transpileEnv = process.env["PULUMI_NODEJS_TRANSPILE_ONLY"];
  const { tsnodeRequire, typescriptRequire } = tsutils.typeScriptRequireStrings();
  const version = (fromSdk(typescriptRequire) as { version: string }).version;
  const nodeNext = !versionBelow(version, { major: 4, minor: 7 });
  const tsNode = fromSdk(tsnodeRequire) as { register(options: Record<string, unknown>): unknown };
  tsNode.register({
    compiler: typescriptRequire,
    transpileOnly: transpileEnv ? transpileEnv === "true" : compilerOptions["noCheck"],
    project: tsconfig,
    skipProject: !existsSync(tsconfig),
    compilerOptions: {
      target: "ES2020",
      module: nodeNext ? "nodenext" : "commonjs",
      moduleResolution: nodeNext ? "nodenext" : "node",
      sourceMap: "true",
      ...compilerOptions,
    },
  });
}

/** The stack's config as the program gets it: keys without a namespace are the project's. */
function programConfig(root: string, project: string, stack: string | undefined): Record<string, string> {
  const file = stack === undefined ? undefined : join(root, `Pulumi.${stack}.yaml`);
  if (!file || !existsSync(file)) return {};
  const map = pulumiConfigMap(file);
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k.includes(":") ? k : `${project}:${k}`, v]));
}

/** Runs the program, every failure it reports (thrown, or a rejected promise) as one message each. */
async function runProgram(entry: string, ts: boolean, req: NodeJS.Require, sdk: PulumiSdk): Promise<string[]> {
  const failures: string[] = [];
  const onRejection = (e: unknown) => failures.push(e instanceof Error ? e.message : String(e));
  process.on("unhandledRejection", onRejection);
  try {
    if (ts) registerTypeScript(req);
    req(entry);
  } catch (e) {
    onRejection(e);
  }
  await settlePreview(sdk);
  // Let rejections of the last registrations surface.
  await new Promise((r) => setImmediate(r));
  process.off("unhandledRejection", onRejection);
  return failures;
}

/**
 * Previews the Pulumi program in `dir` with the config of `Pulumi.<stack>.yaml` (when there is one).
 * @throws UsageError when `dir` is not a Node.js Pulumi project with its packages installed; ConfigError naming
 * what the program threw, or each resource the deploy simulation refuses.
 */
export async function previewProgram(
  dir: string,
  stack: string | undefined,
): Promise<{ resources: PreviewResource[] }> {
  const root = resolve(dir);
  const project = readProject(root);
  const entry = entryOf(root, project.main);
  const { sdk, require: req } = programSdk(root);
  const config = programConfig(root, project.name, stack);
  const recorded = await installPreviewMocks(config, stack ?? DEFAULT_PROGRAM_STACK, sdk, project.name);
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const ts = project.typescript && /\.[cm]?ts$/.test(entry);
    const failures = await runProgram(entry, ts, req, sdk);
    if (failures.length)
      throw new ConfigError(
        failures.map((message) => ({ path: "program", message })),
        `the program ${entry} (offline, under Pulumi's mocks)`,
      );
  } finally {
    process.chdir(cwd);
  }
  return simulated(recorded, entry);
}
