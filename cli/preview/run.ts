/**
 * `ray-gpu preview`: runs the real program in `stacks/` under Pulumi's mock runtime with a stack's config and
 * lists every resource `pulumi up` would create, with its inputs (secrets redacted). No cloud credentials, no
 * Pulumi CLI: outputs only the cloud knows appear as `<computed: …>` placeholders.
 */
import { byCodePoint, sortKeys } from "../../core/serialize";
import { planStackFile, pulumiConfigMap } from "../input/stack-file";
import { loadRuntimePackage } from "../../io/runtime-package";
import { checkProgram } from "../../core/deploy/program";
import { ConfigError } from "../../core/errors";
import type { StackPlan } from "../../workloads/stack";
import { installPreviewMocks, settlePreview, type RecordedResource } from "./mocks";

/** One resource of the preview. */
export interface PreviewResource {
  readonly type: string;
  readonly name: string;
  /** Name of the parent resource, or null for the stack's direct children. */
  readonly parent: string | null;
  readonly inputs: Record<string, unknown>;
  /** Present when the resource is protected from deletion: `protect` and/or `retainOnDelete`. */
  readonly protection?: readonly ("protect" | "retainOnDelete")[];
  /** Present when a change to these inputs replaces the resource (a RayJob's `spec`: its running job restarts). */
  readonly replaceOnChanges?: readonly string[];
  /**
   * Names of the resources Pulumi creates before this one: its `dependsOn` (a component's expanded to its resources)
   * and the resources whose outputs it takes as inputs. Sorted by code point.
   */
  readonly dependsOn: readonly string[];
}

/** The resource name of a URN (`urn:pulumi:stack::project::type::name`). */
const urnName = (urn: string) => urn.split("::").pop() ?? urn;

/** Keys whose values are secrets: names ending in password, secret, token (not httpTokens), private key, kubeconfig. */
const SECRET_KEY = /(password|secret|token|privatekey|kubeconfig)$/i;

/** Replaces values under secret-looking keys, and Pulumi secrets, with a marker. */
export function redact(value: unknown, key = ""): unknown {
  if (SECRET_KEY.test(key)) return "[redacted]";
  if (Array.isArray(value)) return value.map((v) => redact(v));
  if (value && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    if (obj["4dabf18193072939515e22adb298388d"] === "1b47061264138c4ac30d75fd1eb44270") return "[secret]";
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, redact(v, k)]));
  }
  return value;
}

/** A recorded resource as the preview lists it (and the deploy simulation reads it): names instead of URNs. */
export function toPreview(r: RecordedResource): PreviewResource {
  return {
    type: r.type,
    name: r.name,
    parent: r.parent ? urnName(r.parent) : null,
    inputs: sortKeys(redact(r.inputs)) as Record<string, unknown>,
    dependsOn: [...new Set(r.dependencies.map(urnName))].sort(byCodePoint),
    ...(r.protect || r.retainOnDelete ? { protection: protectionOf(r) } : {}),
    ...(r.replaceOnChanges.length ? { replaceOnChanges: [...r.replaceOnChanges] } : {}),
  };
}

const protectionOf = (r: RecordedResource): ("protect" | "retainOnDelete")[] => [
  ...(r.protect ? (["protect"] as const) : []),
  ...(r.retainOnDelete ? (["retainOnDelete"] as const) : []),
];

/**
 * Previews `Pulumi.<stack>.yaml` of `dir`.
 * @throws ConfigError when the config or a workload is invalid (before anything runs); UsageError for an unknown stack.
 */
export async function previewStack(
  dir: string,
  stack: string,
): Promise<{ resources: PreviewResource[]; deploy: Pick<StackPlan, "apiEndpoint" | "destroy"> }> {
  const { file, plan } = planStackFile(dir, stack, { runtime: loadRuntimePackage(), requireRender: true });
  const recorded = await installPreviewMocks(pulumiConfigMap(file), stack);
  // The Pulumi program: in the CLI's bundle, or from source under a TypeScript loader (tests).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS module run for its side effects
  require("../../stacks/index");
  await settlePreview();
  return { ...simulated(recorded, file), deploy: { apiEndpoint: plan.apiEndpoint, destroy: plan.destroy } };
}

/** What the deploy simulation checks, as its refusal's heading names it (core/deploy/program.ts). */
const SIMULATED = "the order pulumi up creates resources in, names, pod placement, service accounts";

/**
 * The recorded resources, sorted by type then name (code point: the order never depends on the machine's locale),
 * through the deploy simulation.
 * @throws ConfigError naming each resource whose create cannot finish, its problem and the fix.
 */
export function simulated(recorded: readonly RecordedResource[], source: string): { resources: PreviewResource[] } {
  const resources = recorded.map(toPreview).sort((a, b) => byCodePoint(a.type, b.type) || byCodePoint(a.name, b.name));
  const problems = checkProgram(resources);
  if (problems.length)
    throw new ConfigError(
      problems.map((p) => ({ path: p.resource, message: p.message })),
      `the deploy simulation of ${source} (${SIMULATED})`,
    );
  return { resources };
}
