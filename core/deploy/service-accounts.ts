/**
 * The deploy simulation's service-account rule: each Ray pod runs as a service account that exists. KubeRay creates the
 * head, worker and submitter pods with their template's `serviceAccountName`, and the API server refuses a pod whose
 * account is missing from its namespace ("error looking up service account"): the RayJob is accepted, and its pods
 * never exist. In a namespace the program creates, the accounts are the ones it creates and `default` (which
 * Kubernetes' service account controller makes in every namespace); in one it does not, other accounts may exist, and
 * nothing is refused. A `RayGpuPlatform` creates `ray-workloads` and one account per workload of its config, so a job
 * rendered in the program but outside that config is found here. Pure: it reads the resource graph.
 */
import type { DeployNode, DeployProblem } from "./order";
import { isRayResource, rayPods, type PodTemplate } from "./placement";

const NAMESPACE = "kubernetes:core/v1:Namespace";
const SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount";

interface Metadata {
  readonly name?: unknown;
  readonly namespace?: unknown;
}
const metadataOf = (n: DeployNode): Metadata => (n.inputs["metadata"] as Metadata | undefined) ?? {};
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The pod templates of a Ray resource that name an account: head and workers, and a RayJob's submitter. */
function namedAccounts(n: DeployNode): { role: string; account: string }[] {
  const submitter = (n.inputs["spec"] as { submitterPodTemplate?: PodTemplate } | undefined)?.submitterPodTemplate;
  const pods = [...rayPods(n), ...(submitter ? [{ role: "submitter pod", template: submitter }] : [])];
  return pods.flatMap(({ role, template }) => {
    const account = text(template.spec?.serviceAccountName);
    return account === undefined || account === "default" ? [] : [{ role, account }];
  });
}

/** Every Ray pod of the graph whose service account its namespace (one the program creates) will not have. */
export function checkServiceAccounts(nodes: readonly DeployNode[]): DeployProblem[] {
  const created = new Set(nodes.filter((n) => n.type === NAMESPACE).flatMap((n) => text(metadataOf(n).name) ?? []));
  const accounts = new Map<string, string[]>();
  for (const metadata of nodes.filter((n) => n.type === SERVICE_ACCOUNT).map(metadataOf)) {
    const [name, namespace] = [text(metadata.name), text(metadata.namespace)];
    if (name !== undefined && namespace !== undefined)
      accounts.set(namespace, [...(accounts.get(namespace) ?? []), name]);
  }
  return nodes.filter(isRayResource).flatMap((n) => {
    const namespace = text(metadataOf(n).namespace);
    if (namespace === undefined || !created.has(namespace)) return [];
    const known = accounts.get(namespace) ?? [];
    return namedAccounts(n)
      .filter((p) => !known.includes(p.account))
      .map((p) => ({
        resource: n.name,
        message:
          `its ${p.role} would run as service account "${p.account}", which no resource of the program creates in ` +
          `namespace "${namespace}" (it has ${["default", ...known].map((a) => `"${a}"`).join(", ")}): the API ` +
          `server refuses such a pod and the job never starts; add the workload to the platform's ray-gpu:workloads ` +
          `(which creates its account), or create the account and render with serviceAccountName`,
      }));
  });
}
