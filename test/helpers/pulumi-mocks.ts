/**
 * Pulumi's mock runtime as a test seam: records every resource the program registers, and sets stack config
 * from a `Pulumi.<stack>.yaml` the way `pulumi up` would hand it over (structured values as JSON text).
 * Import the program under test with `await import(...)` after {@link setupPulumiMocks}.
 */
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";

/** A resource the program registered. */
export interface RecordedResource {
  readonly type: string;
  readonly name: string;
  readonly inputs: Record<string, unknown>;
  readonly parent: string | undefined;
}

/** `config:` of a stack file, as Pulumi's runtime sees it. */
export function stackFileConfig(file: string): Record<string, string> {
  const doc = parse(readFileSync(file, "utf8")) as { config: Record<string, unknown> };
  return Object.fromEntries(Object.entries(doc.config).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
}

// The mock monitor's request object (protobuf RegisterResourceRequest): the parts we read.
interface RegisterRequest {
  getType(): string;
  getName(): string;
  getParent(): string;
}
interface Monitor {
  registerResource(req: RegisterRequest, callback: unknown): Promise<void>;
}

/**
 * Installs the mocks and the config; returns the list that fills as resources register. Pulumi's mock
 * `newResource` does not see the parent, so the monitor's `registerResource` is wrapped to note it first.
 */
export async function setupPulumiMocks(config: Record<string, string>, stack = "dev"): Promise<RecordedResource[]> {
  const recorded: RecordedResource[] = [];
  const parents = new Map<string, string>();
  pulumi.runtime.setAllConfig(config);
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const parent = parents.get(`${args.type}::${args.name}`);
        recorded.push({ type: args.type, name: args.name, inputs: args.inputs as Record<string, unknown>, parent: parent || undefined });
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call(args) {
        return args.inputs;
      },
    },
    "ray-gpu",
    stack,
    false,
  );
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- internal module of the pinned @pulumi/pulumi
  const settings = require("@pulumi/pulumi/runtime/settings") as { getMonitor(): Monitor };
  const monitor = settings.getMonitor();
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, callback) => {
    parents.set(`${req.getType()}::${req.getName()}`, req.getParent());
    return register(req, callback);
  };
  return recorded;
}

/** The value of an Output, for assertions. */
export function promiseOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}
