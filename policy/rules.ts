/**
 * The rules of the `pulumi-ray-gpu` policy pack, as pure functions of a resource (its Pulumi type, inputs and
 * options) or of the whole stack: they check any stack that uses our components, or its own RayJobs. `./pack.ts`
 * wraps them for `@pulumi/policy`; tests call them directly with passing and failing resources.
 */
import { secretLooking } from "../core/config/secrets";

/** A resource as a policy sees it. */
export interface PolicyInput {
  readonly type: string;
  readonly name: string;
  readonly props: Readonly<Record<string, unknown>>;
  readonly protect?: boolean;
}

/** A rule on one resource type: what it checks, and each violation as a sentence. */
export interface ResourceRule {
  readonly name: string;
  readonly description: string;
  readonly types: readonly string[];
  readonly check: (r: PolicyInput) => string[];
}

const RAYJOB = "kubernetes:ray.io/v1:RayJob";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Every pod template of a RayJob: head, worker groups, submitter. */
function rayJobPods(props: Readonly<Obj>): { role: string; spec: Obj }[] {
  const cluster = obj(obj(props["spec"])["rayClusterSpec"]);
  const head = obj(obj(obj(cluster["headGroupSpec"])["template"])["spec"]);
  const workers = arr(cluster["workerGroupSpecs"]).map((g) => obj(obj(obj(g)["template"])["spec"]));
  const submitter = obj(obj(obj(props["spec"])["submitterPodTemplate"])["spec"]);
  return [
    { role: "head", spec: head },
    ...workers.map((spec, i) => ({ role: `worker group ${i}`, spec })),
    ...(Object.keys(submitter).length ? [{ role: "submitter", spec: submitter }] : []),
  ];
}

const containers = (pod: Obj) => arr(pod["containers"]).map(obj);

export const RULES: readonly ResourceRule[] = [
  {
    name: "ray-auth-token",
    description: "Every RayJob turns on Ray's token authentication (authOptions.mode: token).",
    types: [RAYJOB],
    check: (r) => {
      const auth = obj(obj(obj(r.props["spec"])["rayClusterSpec"])["authOptions"]);
      return auth["mode"] === "token"
        ? []
        : [`RayJob ${r.name}: authOptions.mode is not "token": anyone who reaches the head runs code`];
    },
  },
  {
    name: "ray-head-no-gpu",
    description: "A RayJob's head requests no GPU and advertises none (num-gpus: 0).",
    types: [RAYJOB],
    check: (r) => {
      const head = obj(obj(obj(r.props["spec"])["rayClusterSpec"])["headGroupSpec"]);
      const gpus = containers(obj(obj(head["template"])["spec"])).some(
        (c) => "nvidia.com/gpu" in obj(obj(c["resources"])["limits"]),
      );
      const params = obj(head["rayStartParams"]);
      return gpus || params["num-gpus"] !== "0"
        ? [`RayJob ${r.name}: the head holds or advertises a GPU (work lands on it)`]
        : [];
    },
  },
  {
    name: "no-plaintext-secret-env",
    description: "No container of a RayJob carries a secret-looking variable as a plain value (use secretKeyRef).",
    types: [RAYJOB],
    check: (r) =>
      rayJobPods(r.props).flatMap(({ role, spec }) =>
        containers(spec).flatMap((c) =>
          arr(c["env"])
            .map(obj)
            .filter((e) => typeof e["value"] === "string" && e["value"] !== "")
            .filter((e) => secretLooking(String(e["name"]), String(e["value"])) !== undefined)
            .map(
              (e) =>
                `RayJob ${r.name} (${role}): env ${String(e["name"])} is a plain secret-looking value; use valueFrom.secretKeyRef`,
            ),
        ),
      ),
  },
  {
    name: "ray-pod-security",
    description:
      "Ray pods run as non-root, without privilege escalation or capabilities, with the runtime's seccomp profile.",
    types: [RAYJOB],
    check: (r) =>
      rayJobPods(r.props).flatMap(({ role, spec }) => {
        const pod = obj(spec["securityContext"]);
        return containers(spec).flatMap((c) => {
          const sc = obj(c["securityContext"]);
          const problems = [
            sc["allowPrivilegeEscalation"] === false ? "" : "allowPrivilegeEscalation is not false",
            arr(obj(sc["capabilities"])["drop"]).includes("ALL") ? "" : "capabilities are not dropped (ALL)",
            (sc["runAsNonRoot"] ?? pod["runAsNonRoot"]) === true ? "" : "runAsNonRoot is not true",
            obj(sc["seccompProfile"] ?? pod["seccompProfile"])["type"] === "RuntimeDefault"
              ? ""
              : "no RuntimeDefault seccomp profile",
          ].filter(Boolean);
          return problems.map((p) => `RayJob ${r.name} (${role}, ${String(c["name"])}): ${p}`);
        });
      }),
  },
  {
    name: "imdsv2-hop-limit-1",
    description: "Launch templates require IMDSv2 with a hop limit of 1, so pods cannot take the node's role.",
    types: ["aws:ec2/launchTemplate:LaunchTemplate"],
    check: (r) => {
      const m = obj(r.props["metadataOptions"]);
      return m["httpTokens"] === "required" && m["httpPutResponseHopLimit"] === 1
        ? []
        : [`LaunchTemplate ${r.name}: metadataOptions must be httpTokens "required" and httpPutResponseHopLimit 1`];
    },
  },
  {
    name: "eks-audit-logging",
    description: "EKS control planes send api, audit and authenticator logs to CloudWatch.",
    types: ["aws:eks/cluster:Cluster"],
    check: (r) => {
      const types = arr(r.props["enabledClusterLogTypes"]);
      const missing = ["api", "audit", "authenticator"].filter((t) => !types.includes(t));
      return missing.length ? [`EKS cluster ${r.name}: control-plane logs missing: ${missing.join(", ")}`] : [];
    },
  },
  {
    name: "eks-secrets-encryption",
    description: "EKS clusters envelope-encrypt Kubernetes Secrets with a KMS key.",
    types: ["aws:eks/cluster:Cluster"],
    check: (r) =>
      arr(obj(r.props["encryptionConfig"])["resources"]).includes("secrets")
        ? []
        : [`EKS cluster ${r.name}: no encryptionConfig for secrets`],
  },
  {
    name: "bucket-kms-encryption",
    description: "Buckets are encrypted with a customer-managed KMS key (aws:kms with a key id).",
    types: ["aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"],
    check: (r) => {
      const rule = obj(arr(r.props["rules"])[0]);
      const sse = obj(rule["applyServerSideEncryptionByDefault"]);
      return sse["sseAlgorithm"] === "aws:kms" && sse["kmsMasterKeyId"]
        ? []
        : [`${r.name}: objects are not encrypted with a customer-managed KMS key`];
    },
  },
  {
    name: "bucket-protected",
    description: "Buckets are protected from `pulumi destroy` and never emptied by it (protect, no forceDestroy).",
    types: ["aws:s3/bucket:Bucket"],
    check: (r) =>
      r.protect && r.props["forceDestroy"] !== true
        ? []
        : [
            `Bucket ${r.name}: not protected (protect: ${String(!!r.protect)}, forceDestroy: ${String(!!r.props["forceDestroy"])})`,
          ],
  },
  {
    name: "no-wildcard-iam",
    description: "IAM policies grant no wildcard action (`*` or `service:*`).",
    types: ["aws:iam/policy:Policy", "aws:iam/rolePolicy:RolePolicy"],
    check: (r) => {
      const doc =
        typeof r.props["policy"] === "string" ? (JSON.parse(r.props["policy"]) as Obj) : obj(r.props["policy"]);
      const wild = arr(doc["Statement"])
        .map(obj)
        .filter((s) => s["Effect"] === "Allow")
        .flatMap((s) => (Array.isArray(s["Action"]) ? s["Action"] : [s["Action"]]))
        .filter((a) => a === "*" || /:\*$/.test(String(a)));
      return wild.length ? [`${r.name}: allows wildcard actions ${wild.join(", ")}`] : [];
    },
  },
];

/** Stack rule: every namespace that runs a RayJob has a default-deny NetworkPolicy (empty pod selector, both ways). */
export function networkPolicyViolations(resources: readonly PolicyInput[]): string[] {
  const ns = (r: PolicyInput) => String(obj(r.props["metadata"])["namespace"] ?? "default");
  const denied = new Set(
    resources
      .filter((r) => r.type === "kubernetes:networking.k8s.io/v1:NetworkPolicy")
      .filter((r) => {
        const spec = obj(r.props["spec"]);
        const types = arr(spec["policyTypes"]);
        return (
          Object.keys(obj(obj(spec["podSelector"])["matchLabels"])).length === 0 &&
          types.includes("Ingress") &&
          types.includes("Egress")
        );
      })
      .map(ns),
  );
  const namespaces = [...new Set(resources.filter((r) => r.type === RAYJOB).map(ns))];
  return namespaces
    .filter((n) => !denied.has(n))
    .map((n) => `namespace ${n} runs RayJobs without a default-deny NetworkPolicy`);
}

/** Every violation of every rule in a set of resources (what the pack reports), one line each. */
export function allViolations(resources: readonly PolicyInput[]): string[] {
  return [
    ...resources.flatMap((r) =>
      RULES.filter((rule) => rule.types.includes(r.type)).flatMap((rule) =>
        rule.check(r).map((v) => `${rule.name}: ${v}`),
      ),
    ),
    ...networkPolicyViolations(resources).map((v) => `network-policy-present: ${v}`),
  ];
}
