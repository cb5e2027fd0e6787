/**
 * Errors of the pure core. Every problem carries the config path it came from, the value that was given
 * and the rule or the fix, so one message can list every mistake of a `Pulumi.<stack>.yaml` at once.
 */

/** One problem found in user input. */
export interface ConfigIssue {
  /** Where the value lives, e.g. `ray-gpu:platform.gpuNodeGroups[0].instanceType`. */
  readonly path: string;
  /** What the rule says, or how to fix it. */
  readonly message: string;
  /** The value that was given; `undefined` when the key is missing. */
  readonly value?: unknown;
}

/** Input that breaks one or more rules. Thrown by the core; the CLI prints it and exits 1. */
export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];
  /** The file or object the issues are about, named in the message's header. */
  readonly source: string | undefined;
  /**
   * Marks the error as one Pulumi's Node.js host prints as its message alone, without a stack trace, when a program
   * (a construct or a component) throws it (`@pulumi/pulumi` cmd/run/run.js, as `pulumi.RunError` is marked); the core
   * still imports nothing of Pulumi.
   */
  readonly __pulumiRunError = true as const;

  constructor(issues: readonly ConfigIssue[], source?: string) {
    super(formatIssues(issues, source));
    this.name = "ConfigError";
    this.issues = issues;
    this.source = source;
  }
}

/**
 * Runs `fn`; a {@link ConfigError} that names no source is thrown again naming `source` (the stack file a planner's
 * cross-field problems come from), so every problem header says which file to open.
 */
export function namingSource<T>(source: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ConfigError && e.source === undefined) throw new ConfigError(e.issues, source);
    throw e;
  }
}

/** Renders a value for an error line: short, JSON-like, never a wall of text. */
export function showValue(value: unknown): string {
  if (value === undefined) return "(missing)";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  const json = JSON.stringify(value);
  if (json === undefined) return String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/** One line per issue: `✖ <path>: <message> (got <value>)`, under a header naming the source. */
export function formatIssues(issues: readonly ConfigIssue[], source?: string): string {
  const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
  const header = source ? `${source}: ${count}` : count;
  const lines = issues.map((i) => {
    const got = "value" in i ? ` (got ${showValue(i.value)})` : "";
    return `  ✖ ${i.path}: ${i.message}${got}`;
  });
  return [header, ...lines].join("\n");
}

/** Collects issues while a planner walks its input, then throws them all at once. */
export class IssueCollector {
  private readonly found: ConfigIssue[] = [];

  add(path: string, message: string, value?: unknown): void {
    this.found.push(arguments.length > 2 ? { path, message, value } : { path, message });
  }

  /** Adds the issues of a caught {@link ConfigError}. */
  addAll(issues: readonly ConfigIssue[]): void {
    this.found.push(...issues);
  }

  get issues(): readonly ConfigIssue[] {
    return this.found;
  }

  /** Throws a {@link ConfigError} when anything was collected. */
  throwIfAny(source?: string): void {
    if (this.found.length > 0) throw new ConfigError(this.found, source);
  }
}
