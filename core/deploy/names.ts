/**
 * The deploy simulation's name rules: every name a resource will have in the cloud, written out or made by the provider
 * from the resource name, against the limit of the service that stores it. Pure: it reads a resource's type, name and
 * inputs. A component names its children `<name>-<role>`, so a long prefix can push a child over a limit that
 * `pulumi preview` never checks (a Helm release name, for one, is refused by Helm only at install).
 */
import type { DeployNode, DeployProblem } from "./order";

/** How a provider names a resource whose name input is left out: `<resource name>-<random>`. */
export interface AutoName {
  /** Characters the provider adds: the separator and the random suffix. */
  readonly suffix: number;
  /** The provider code that names it. */
  readonly source: string;
}

/** One name of a resource type and its limit. */
export interface NameLimit {
  /** The input that holds the name (a dotted path), e.g. `metadata.name`. */
  readonly field: string;
  /** Longest name the service accepts. */
  readonly max: number;
  /** What the limit is, as its owner calls it. */
  readonly what: string;
  /** Where the limit is written. */
  readonly source: string;
  /** How the provider names the resource when the field is left out; absent when it then picks a short name. */
  readonly autoName?: AutoName;
}

/** pulumi-kubernetes `provider/pkg/metadata/naming.go` and `provider/pkg/provider/helm_release.go`: `-` + 8 hex. */
const K8S_AUTONAME: AutoName = {
  suffix: 9,
  source: "pulumi-kubernetes assignNameIfAutonameable: <resource name>-<8 random hex>",
};
/** pulumi-aws `provider/resources.go` `tfbridge.AutoName(name, max, "-")`: `-` + 7 hex. */
const AWS_AUTONAME: AutoName = { suffix: 8, source: "pulumi-aws tfbridge.AutoName: <resource name>-<7 random hex>" };
/** terraform-provider-aws `id.UniqueIDSuffixLength`: a `*_prefix` gets 26 characters added. */
const PREFIX_SUFFIX = 26;
const TF_AWS = "hashicorp/terraform-provider-aws";

/** A Kubernetes object's `metadata.name`: a DNS-1123 subdomain unless the kind says less. */
const k8sName = (max: number, what: string, source: string): NameLimit => ({
  field: "metadata.name",
  max,
  what,
  source,
  autoName: K8S_AUTONAME,
});
const SUBDOMAIN = k8sName(253, "a Kubernetes object name (DNS-1123 subdomain)", "k8s.io/apimachinery validation.go");
const LABEL_NAME = (what: string) => k8sName(63, `${what} (DNS label)`, "k8s.io/apimachinery validation.go");

/** A name and its `*Prefix` form (the provider adds 26 characters to the prefix). */
function withPrefix(name: NameLimit): NameLimit[] {
  const { field, max, what, source } = name;
  return [
    name,
    { field: `${field}Prefix`, max: max - PREFIX_SUFFIX, what: `${what} prefix (26 characters are added)`, source },
  ];
}

/** The names each resource type carries, by type token. Other Kubernetes kinds: {@link SUBDOMAIN}. */
export const NAME_LIMITS: Readonly<Record<string, readonly NameLimit[]>> = {
  "kubernetes:helm.sh/v3:Release": [
    {
      field: "name",
      max: 53,
      what: "a Helm release name",
      source: "helm pkg/chartutil/validate_name.go maxReleaseNameLen",
      autoName: K8S_AUTONAME,
    },
  ],
  "kubernetes:core/v1:Namespace": [LABEL_NAME("a namespace name")],
  "kubernetes:core/v1:Service": [LABEL_NAME("a Service name")],
  "kubernetes:ray.io/v1:RayJob": [
    k8sName(47, "a RayJob name", "ray-project/kuberay ray-operator/controllers/ray/utils/validation.go"),
  ],
  "aws:iam/role:Role": withPrefix({
    field: "name",
    max: 64,
    what: "an IAM role name",
    source: `${TF_AWS} internal/service/iam/role.go`,
    autoName: AWS_AUTONAME,
  }),
  "aws:iam/policy:Policy": withPrefix({
    field: "name",
    max: 128,
    what: "an IAM policy name",
    source: `${TF_AWS} internal/service/iam/policy.go`,
  }),
  "aws:eks/nodeGroup:NodeGroup": withPrefix({
    field: "nodeGroupName",
    max: 63,
    what: "an EKS node group name",
    source: `${TF_AWS} internal/service/eks/node_group.go`,
  }),
  "aws:eks/cluster:Cluster": [
    { field: "name", max: 100, what: "an EKS cluster name", source: `${TF_AWS} internal/service/eks/cluster.go` },
  ],
  "aws:s3/bucket:Bucket": withPrefix({
    field: "bucket",
    max: 63,
    what: "an S3 bucket name",
    source: `${TF_AWS} internal/service/s3/bucket.go`,
    autoName: AWS_AUTONAME,
  }),
  "aws:ec2/launchTemplate:LaunchTemplate": withPrefix({
    field: "name",
    max: 128,
    what: "a launch template name",
    source: `${TF_AWS} internal/service/ec2/ec2_launch_template.go`,
  }),
};

/** Longest Kubernetes label value (k8s.io/apimachinery `LabelValueMaxLength`). */
export const MAX_LABEL_VALUE = 63;

/** The value at a dotted path, or undefined. */
function at(inputs: Readonly<Record<string, unknown>>, path: string): unknown {
  return path.split(".").reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as never)[k] : undefined), inputs);
}

/** The limits of a type: its own, or a Kubernetes object's. */
export function nameLimits(type: string): readonly NameLimit[] {
  return NAME_LIMITS[type] ?? (type.startsWith("kubernetes:") && !type.includes(":helm.sh/") ? [SUBDOMAIN] : []);
}

/** The name a limit applies to: the one given, or the length of the one the provider makes; undefined when unknown. */
function nameOf(n: DeployNode, limit: NameLimit): { given: string } | { made: number } | undefined {
  const given = at(n.inputs, limit.field);
  if (typeof given === "string" && given !== "") return { given };
  if (given !== undefined || !limit.autoName) return undefined; // computed, or the provider picks a short name
  return { made: n.name.length + limit.autoName.suffix };
}

/**
 * How many characters the longest name a provider makes from the resource name is over its limit: what a shorter
 * resource (or component) name must save. 0 when every made name fits.
 */
export function nameOverflow(n: DeployNode): number {
  const over = nameLimits(n.type).map((l) => {
    const name = nameOf(n, l);
    return name === undefined || "given" in name ? 0 : name.made - l.max;
  });
  return Math.max(0, ...over);
}

/** The problem with one name of a resource, or undefined when it fits. */
function problemOf(n: DeployNode, limit: NameLimit): string | undefined {
  const name = nameOf(n, limit);
  if (name === undefined) return undefined;
  if ("given" in name) {
    if (name.given.length <= limit.max) return undefined;
    const length = `${limit.field} "${name.given}" is ${name.given.length} characters`;
    return `${length}; ${limit.what} is at most ${limit.max} (${limit.source}): give it a shorter name`;
  }
  if (name.made <= limit.max) return undefined;
  const room = limit.max - limit.autoName!.suffix;
  return (
    `its ${limit.field} is made from the resource name (${limit.autoName!.source}): ${name.made} characters, but ` +
    `${limit.what} is at most ${limit.max} (${limit.source}); keep the resource name to ${room} characters ` +
    `(a shorter component name) or set ${limit.field}`
  );
}

/** Label values over 63 characters in `metadata.labels` (a Kubernetes object's). */
function labelProblems(n: DeployNode): string[] {
  if (!n.type.startsWith("kubernetes:")) return [];
  const labels = at(n.inputs, "metadata.labels");
  if (!labels || typeof labels !== "object") return [];
  return Object.entries(labels as Record<string, unknown>)
    .filter(([, v]) => typeof v === "string" && v.length > MAX_LABEL_VALUE)
    .map(
      ([k, v]) =>
        `label ${k} is ${(v as string).length} characters; a label value is at most ${MAX_LABEL_VALUE} ` +
        `(k8s.io/apimachinery LabelValueMaxLength): shorten it`,
    );
}

/** Every name of the graph over its limit. */
export function checkNames(nodes: readonly DeployNode[]): DeployProblem[] {
  return nodes.flatMap((n) =>
    [
      ...nameLimits(n.type)
        .map((l) => problemOf(n, l))
        .filter((m): m is string => m !== undefined),
      ...labelProblems(n),
    ].map((message) => ({ resource: n.name, message })),
  );
}
