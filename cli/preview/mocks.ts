/**
 * Pulumi's mock runtime set up to stand in for the cloud: every resource the program registers is recorded
 * (type, name, parent, inputs), and outputs that only the cloud knows come back as clear placeholders such as
 * `<computed: vpcId of ray-gpu-network-vpc>`. Used by `ray-gpu preview` and by the tests.
 */
import * as pulumi from "@pulumi/pulumi";

/** A resource the program would create. */
export interface RecordedResource {
  readonly type: string;
  readonly name: string;
  /** URN of the parent resource, or undefined for the stack's direct children. */
  readonly parent: string | undefined;
  readonly inputs: Record<string, unknown>;
  /** URNs the resource depends on (dependsOn and inputs from other resources). */
  readonly dependencies: readonly string[];
  /** Reference of the provider the resource uses (`<urn>::<id>`), or "" for the default provider. */
  readonly provider: string;
  /** `protect`: `pulumi destroy` and replacements refuse to delete it. */
  readonly protect: boolean;
  /** `retainOnDelete`: removed from the program or replaced, it stays in the cloud. */
  readonly retainOnDelete: boolean;
  /** `replaceOnChanges`: input paths whose change replaces the resource (a RayJob's `spec`: the job restarts). */
  readonly replaceOnChanges: readonly string[];
  /** `ignoreChanges`: input paths whose change is never applied (a RayJob's `spec.suspend`, which Kueue owns). */
  readonly ignoreChanges: readonly string[];
}

const computed = (what: string, name: string) => `<computed: ${what} of ${name}>`;

/** Outputs the cloud would fill in, per resource type; everything else echoes the inputs. */
function placeholderState(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  const arn = `arn:aws:${type.split(":")[1]?.split("/")[0] ?? "aws"}:<computed>:${name}`;
  const base = { ...inputs, arn, id: computed("id", name) };
  switch (type) {
    case "awsx:ec2:Vpc": {
      const zones = Number(inputs["numberOfAvailabilityZones"] ?? 2);
      const subnets = (kind: string) =>
        Array.from({ length: zones }, (_, i) => computed(`${kind} subnet ${i + 1}`, name));
      return {
        ...base,
        vpcId: computed("vpcId", name),
        privateSubnetIds: subnets("private"),
        publicSubnetIds: subnets("public"),
      };
    }
    case "aws:eks/cluster:Cluster":
      return {
        ...base,
        endpoint: computed("endpoint", name),
        certificateAuthority: { data: computed("certificate authority", name) },
        vpcConfig: {
          ...(inputs["vpcConfig"] as object),
          vpcId: computed("vpcId", name),
          clusterSecurityGroupId: computed("cluster security group", name),
        },
      };
    case "aws:eks/nodeGroup:NodeGroup":
      return {
        ...base,
        nodeGroupName: computed("nodeGroupName", name),
        resources: [{ autoscalingGroups: [{ name: computed("Auto Scaling group", name) }] }],
      };
    case "aws:iam/role:Role":
      return { ...base, name: computed("name", name), arn: `arn:aws:iam::<computed account>:role/${name}` };
    case "aws:s3/bucket:Bucket": {
      const bucket = (inputs["bucket"] as string | undefined) ?? computed("bucket name", name);
      return { ...base, bucket, arn: `arn:aws:s3:::${bucket}`, id: bucket };
    }
    case "aws:ec2/launchTemplate:LaunchTemplate":
      return { ...base, latestVersion: 1 };
    default:
      return base;
  }
}

/** Results of data-source calls (invokes) the program makes. */
function placeholderCall(token: string, inputs: Record<string, unknown>): Record<string, unknown> {
  switch (token) {
    case "aws:eks/getCluster:getCluster": {
      const name = String(inputs["name"]);
      return {
        ...inputs,
        arn: `arn:aws:eks:<computed region>:<computed account>:cluster/${name}`,
        endpoint: computed("endpoint", name),
        certificateAuthorities: [{ data: computed("certificate authority", name) }],
        vpcConfig: {
          subnetIds: [computed("subnet 1", name), computed("subnet 2", name)],
          vpcId: computed("vpcId", name),
          clusterSecurityGroupId: computed("cluster security group", name),
        },
      };
    }
    case "aws:ec2/getSubnets:getSubnets": {
      const filters = (inputs["filters"] ?? []) as { name: string; values: string[] }[];
      const az = filters.find((f) => f.name === "availability-zone")?.values[0];
      const listed = filters.find((f) => f.name === "subnet-id")?.values;
      if (az) return { ...inputs, ids: [computed(`private subnet in ${az}`, "the VPC")] };
      return { ...inputs, ids: (listed ?? ["subnets"]).map((id) => computed("private subnet", String(id))) };
    }
    case "aws:index/getCallerIdentity:getCallerIdentity":
      return { ...inputs, accountId: "<computed account>" };
    case "aws:ec2/getVpc:getVpc":
      return { ...inputs, cidrBlock: computed("cidrBlock", String(inputs["id"])) };
    default:
      return inputs;
  }
}

/** What the monitor's registration says of a resource that the mock's `newResource` does not see. */
type Seen = {
  parent: string;
  dependencies: string[];
  provider: string;
  protect: boolean;
  retainOnDelete: boolean;
  replaceOnChanges: string[];
  ignoreChanges: string[];
};

// The mock monitor's request object (protobuf RegisterResourceRequest): the part we read.
interface RegisterRequest {
  getType(): string;
  getName(): string;
  getParent(): string;
  getDependenciesList(): string[];
  getProvider(): string;
  getProtect(): boolean;
  getRetainondelete(): boolean;
  getReplaceonchangesList(): string[];
  getIgnorechangesList(): string[];
}
interface Monitor {
  registerResource(req: RegisterRequest, callback: unknown): Promise<void>;
}

/**
 * The Pulumi SDK the mocks go on: the program's own `@pulumi/pulumi` (a project's node_modules has its own copy, and
 * mocks set on another copy are never seen), with its internal settings module (the monitor the mocks install).
 */
export interface PulumiSdk {
  readonly runtime: Pick<typeof pulumi.runtime, "setAllConfig" | "setMocks">;
  readonly settings: { getMonitor(): Monitor; waitForRPCs(): Promise<void> };
}

/** The `@pulumi/pulumi` this package resolves (the program bundled with the CLI, a team's unit tests). */
export function ownSdk(): PulumiSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- internal module of the pinned @pulumi/pulumi
  const settings = require("@pulumi/pulumi/runtime/settings") as PulumiSdk["settings"];
  return { runtime: pulumi.runtime, settings };
}

/**
 * Sets `config` (as `pulumi up` hands it over: structured values as JSON text) and the mocks; returns the list
 * that fills as the program registers resources. Pulumi's mock `newResource` does not see the parent, so the
 * monitor's `registerResource` is wrapped to note it first (internal module of the pinned @pulumi/pulumi).
 */
export async function installPreviewMocks(
  config: Record<string, string>,
  stack: string,
  sdk: PulumiSdk = ownSdk(),
  project = "ray-gpu",
): Promise<RecordedResource[]> {
  const recorded: RecordedResource[] = [];
  const parents = new Map<string, Seen>();
  sdk.runtime.setAllConfig(config);
  await sdk.runtime.setMocks(
    {
      newResource(args) {
        const inputs = args.inputs as Record<string, unknown>;
        const seen = parents.get(`${args.type}::${args.name}`);
        recorded.push({
          type: args.type,
          name: args.name,
          inputs,
          parent: seen?.parent || undefined,
          dependencies: seen?.dependencies ?? [],
          provider: seen?.provider ?? "",
          protect: seen?.protect ?? false,
          retainOnDelete: seen?.retainOnDelete ?? false,
          replaceOnChanges: seen?.replaceOnChanges ?? [],
          ignoreChanges: seen?.ignoreChanges ?? [],
        });
        const state = placeholderState(args.type, args.name, inputs);
        return { id: String(state["id"]), state };
      },
      call(args) {
        return placeholderCall(args.token, args.inputs as Record<string, unknown>);
      },
    },
    project,
    stack,
    true,
  );
  const monitor = sdk.settings.getMonitor();
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, callback) => {
    parents.set(`${req.getType()}::${req.getName()}`, {
      parent: req.getParent(),
      dependencies: req.getDependenciesList(),
      provider: req.getProvider(),
      protect: req.getProtect(),
      retainOnDelete: req.getRetainondelete(),
      replaceOnChanges: req.getReplaceonchangesList(),
      ignoreChanges: req.getIgnorechangesList(),
    });
    return register(req, callback);
  };
  return recorded;
}

/** Waits until every registration and call the program started has finished. */
export async function settlePreview(sdk: PulumiSdk = ownSdk()): Promise<void> {
  await sdk.settings.waitForRPCs();
}
