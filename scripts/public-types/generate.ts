/**
 * The plain TypeScript types of our configuration, specs and runtime contract, generated from their zod schemas (the
 * one definition) so that no published declaration imports zod: zod's own declarations need `esModuleInterop` or
 * `skipLibCheck`, which the 2019-2026 `pulumi new typescript` tsconfig has neither of (docs/library.md). Each property
 * keeps its JSDoc. After printing, a second compile checks that every generated type is exactly (not just assignably)
 * the schema's output or input type; `npm run generate` writes the files, and a test fails when they differ.
 */
import { dirname, join, relative } from "node:path";
import prettier from "prettier";
import ts from "typescript";
import { TypePrinter } from "./print";
import { PUBLIC_TYPE_FILES, type PublicType, type PublicTypesFile } from "./targets";

const root = join(__dirname, "../..");
const PROBE = join(root, "public-types.probe.ts");
const CHECK = join(root, "public-types.check.ts");

/** The generated files: path (from the repository root) and content, formatted as the repository formats. */
export async function publicTypeFiles(): Promise<Map<string, string>> {
  const program = compile(new Map([[PROBE, probeSource()]]));
  const types = resolvedTypes(program);
  const out = new Map<string, string>();
  for (const file of PUBLIC_TYPE_FILES) out.set(file.path, await format(file.path, fileSource(program, file, types)));
  checkExact(out);
  return out;
}

/**
 * Throws unless each type in `files` (path from the root to content) is exactly its schema's output or input type.
 * @throws Error naming each type that differs.
 */
export function checkExact(files: ReadonlyMap<string, string>): void {
  const overlay = new Map([...files].map(([p, text]) => [join(root, p), text] as const));
  const program = compile(overlay.set(CHECK, checkSource()));
  const problems = [
    ...program.getSemanticDiagnostics(program.getSourceFile(CHECK)),
    ...PUBLIC_TYPE_FILES.flatMap((f) => program.getSemanticDiagnostics(program.getSourceFile(join(root, f.path)))),
  ];
  if (problems.length > 0)
    throw new Error(
      `the generated public types are not exactly the schemas' types:\n${problems.map(describe).join("\n")}`,
    );
}

function describe(d: ts.Diagnostic): string {
  const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
  const line = where ? d.file!.text.split("\n")[where.line]!.trim() : "";
  return `${d.file ? relative(root, d.file.fileName) : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}\n  ${line}`;
}

/** Each target with the type its schema resolves to in `program`. */
interface Resolved {
  readonly target: PublicType;
  readonly file: PublicTypesFile;
  readonly type: ts.Type;
}

function allTargets(): { target: PublicType; file: PublicTypesFile }[] {
  return PUBLIC_TYPE_FILES.flatMap((file) => file.types.map((target) => ({ target, file })));
}

/** `import type * as m0 from "./core/config/platform"` for each schema module, aliased by index. */
function moduleAliases(): Map<string, string> {
  const modules = [...new Set(allTargets().map(({ target }) => target.module))];
  return new Map(modules.map((m, i) => [m, `m${i}`] as const));
}

function relativeModule(fromFile: string, module: string): string {
  const rel = relative(dirname(fromFile), join(root, module)).replaceAll("\\", "/");
  return rel.startsWith(".") ? rel : `./${rel}`;
}

function schemaImports(from: string): string {
  return [...moduleAliases()].map(([m, a]) => `import type * as ${a} from "${relativeModule(from, m)}";`).join("\n");
}

function zodType(target: PublicType, aliases: Map<string, string>): string {
  return `z.${target.side}<typeof ${aliases.get(target.module)}.${target.schema}>`;
}

function probeSource(): string {
  const aliases = moduleAliases();
  const lines = allTargets().map(({ target }, i) => `export type T${i} = ${zodType(target, aliases)};`);
  return `import type { z } from "zod";\n${schemaImports(PROBE)}\n${lines.join("\n")}\n`;
}

function resolvedTypes(program: ts.Program): Resolved[] {
  const checker = program.getTypeChecker();
  const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(PROBE)!)!);
  return allTargets().map(({ target, file }, i) => {
    const alias = exports.find((s) => s.name === `T${i}`)!;
    return { target, file, type: checker.getDeclaredTypeOfSymbol(alias) };
  });
}

/** One generated file: its header, the imports of the other files' types it names, its declarations. */
function fileSource(program: ts.Program, file: PublicTypesFile, types: readonly Resolved[]): string {
  const used = new Map<PublicTypesFile, Set<string>>();
  let side: PublicType["side"] = "output";
  const nameOf = (type: ts.Type, self: ts.Type): string | undefined => {
    const matches = types.filter((r) => r.type === type && r.type !== self);
    const match = matches.find((r) => r.target.side === side) ?? matches[0];
    if (match && match.file !== file) used.set(match.file, (used.get(match.file) ?? new Set()).add(match.target.name));
    return match?.target.name;
  };
  const printer = new TypePrinter(program.getTypeChecker(), { nameOf });
  const declarations = file.types.map((target) => {
    side = target.side;
    const { type } = types.find((r) => r.target === target)!;
    return printer.declaration(target.name, type, target.doc);
  });
  const imports = [...used].map(
    ([other, names]) =>
      `import type { ${[...names].sort().join(", ")} } from "${relativeModule(join(root, file.path), other.path.replace(/\.ts$/, ""))}";`,
  );
  const notice = "Generated by `npm run generate` (scripts/public-types) from the zod schemas; do not edit.";
  const header = `/**\n * ${file.about}\n *\n * ${notice}\n */\n`;
  return `${header}${imports.join("\n")}\n\n${declarations.join("\n")}`;
}

async function format(path: string, source: string): Promise<string> {
  const options = await prettier.resolveConfig(join(root, path));
  return prettier.format(source, { ...options, filepath: join(root, path) });
}

/** For each target, `Equals<Generated, z.output<typeof Schema>>` must hold: exact, readonly and optional included. */
function checkSource(): string {
  const aliases = moduleAliases();
  const files = PUBLIC_TYPE_FILES.map(
    (f, i) => `import type * as g${i} from "${relativeModule(CHECK, f.path.replace(/\.ts$/, ""))}";`,
  );
  const equals =
    "type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;";
  const checks = PUBLIC_TYPE_FILES.flatMap((f, i) =>
    f.types.map((t) => `export const ${t.name}: Equals<g${i}.${t.name}, ${zodType(t, aliases)}> = true;`),
  );
  return ['import type { z } from "zod";', schemaImports(CHECK), ...files, equals, ...checks].join("\n");
}

/** A program over the repository's tsconfig, with `overlay` files served from memory. */
function compile(overlay: Map<string, string>): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  )!;
  const options = { ...config.options, noEmit: true, noUnusedLocals: false };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (f) => overlay.get(f) ?? read(f);
  const exists = host.fileExists.bind(host);
  host.fileExists = (f) => overlay.has(f) || exists(f);
  const get = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, ...rest) => {
    const text = overlay.get(f);
    return text === undefined ? get(f, lang, ...rest) : ts.createSourceFile(f, text, lang);
  };
  return ts.createProgram([...overlay.keys()], options, host);
}
