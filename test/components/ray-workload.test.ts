/**
 * RayWorkload's children under Pulumi's mocks: each rendered object becomes `<component>-<role>-<kind>` (the role is
 * the object's name without the workload's), and each child that had another name before (`<component>-<object
 * name>-<kind>`) carries it as an alias under the same parent, so `pulumi up` after an upgrade renames it in place:
 * its URN before is the alias's URN.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { planStack } from "../../workloads/stack";
import { repoStack, runtime } from "../helpers/fixtures";
import { promiseOf, settlePreview, setupPulumiMocks } from "../helpers/pulumi-mocks";

/** What the monitor is told of a registration (protobuf RegisterResourceRequest): the part read here. */
interface AliasSpec {
  getName(): string;
  getType(): string;
  getParenturn(): string;
  getNoparent(): boolean;
}
interface Request {
  getType(): string;
  getName(): string;
  getParent(): string;
  getAliasesList(): { getSpec(): AliasSpec | undefined; getUrn(): string }[];
}
interface Registered {
  readonly type: string;
  readonly name: string;
  readonly urn: string;
  readonly parent: string;
  readonly aliases: readonly AliasSpec[];
}

/** Wraps the mock monitor's `registerResource` (internal module of the pinned @pulumi/pulumi) to see each alias. */
function recordRegistrations(): Registered[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- internal module of the pinned @pulumi/pulumi
  const settings = require("@pulumi/pulumi/runtime/settings") as {
    getMonitor(): { registerResource(req: Request, cb: (err: unknown, res?: { getUrn(): string }) => void): unknown };
  };
  const monitor = settings.getMonitor();
  const register = monitor.registerResource.bind(monitor);
  const seen: Registered[] = [];
  monitor.registerResource = (req, cb) =>
    register(req, (err, res) => {
      const aliases = req.getAliasesList().flatMap((a) => (a.getSpec() ? [a.getSpec()!] : []));
      if (res)
        seen.push({ type: req.getType(), name: req.getName(), urn: res.getUrn(), parent: req.getParent(), aliases });
      cb(err, res);
    });
  return seen;
}

const WORKLOAD = "llm-pretrain";
const PARENT = "ray-gpu:index:RayWorkload";

describe("RayWorkload children", () => {
  let seen: Registered[];
  beforeAll(async () => {
    await setupPulumiMocks({}, "dev");
    seen = recordRegistrations();
    const { RayWorkload } = await import("../../components/ray-workload.js");
    const objects = planStack(repoStack("dev"), { runtime }).objects.find((o) => o.workload === WORKLOAD)!.objects;
    new RayWorkload(WORKLOAD, { objects });
    await settlePreview();
  });

  it("names each object's child after its role, the workload's name said once", () => {
    const children = seen.filter((r) => r.type !== PARENT).map((r) => `${r.type} ${r.name}`);
    expect(children.sort()).toEqual([
      "kubernetes:core/v1:ConfigMap llm-pretrain-tuning-configmap",
      "kubernetes:monitoring.coreos.com/v1:PrometheusRule llm-pretrain-alerts-prometheusrule",
      "kubernetes:networking.k8s.io/v1:NetworkPolicy llm-pretrain-ray-peers-networkpolicy",
      "kubernetes:policy/v1:PodDisruptionBudget llm-pretrain-pdb",
      "kubernetes:ray.io/v1:RayJob llm-pretrain-rayjob",
    ]);
    const parent = seen.find((r) => r.type === PARENT)!.urn;
    expect(seen.find((r) => r.type === "kubernetes:core/v1:ConfigMap")!.urn).toBe(
      `urn:pulumi:dev::ray-gpu::${PARENT}$kubernetes:core/v1:ConfigMap::llm-pretrain-tuning-configmap`,
    );
    expect(seen.filter((r) => r.type !== PARENT).every((r) => r.parent === parent)).toBe(true);
  });

  it("gives each renamed child its former name as an alias under the same parent: the URN it had before", async () => {
    // pulumi-kubernetes adds its own aliases of a kind's former API versions (name empty: the current one).
    const named = (r: Registered) => r.aliases.filter((a) => a.getName() !== "");
    const renamed = seen.filter((r) => named(r).length > 0);
    const before = await Promise.all(
      renamed.map(async (r) => {
        expect(named(r)).toHaveLength(1);
        const [alias] = named(r);
        // Type and parent as they are now (an empty type is the current one; the SDK passes the current parent).
        expect([alias!.getType(), alias!.getParenturn(), alias!.getNoparent()]).toEqual(["", r.parent, false]);
        return promiseOf(pulumi.createUrn(alias!.getName(), r.type, alias!.getParenturn()));
      }),
    );
    const at = (type: string, name: string) => `urn:pulumi:dev::ray-gpu::${PARENT}$${type}::${name}`;
    expect(before.sort()).toEqual([
      at("kubernetes:core/v1:ConfigMap", "llm-pretrain-llm-pretrain-tuning-configmap"),
      at("kubernetes:monitoring.coreos.com/v1:PrometheusRule", "llm-pretrain-llm-pretrain-alerts-prometheusrule"),
      at("kubernetes:networking.k8s.io/v1:NetworkPolicy", "llm-pretrain-llm-pretrain-ray-peers-networkpolicy"),
      at("kubernetes:policy/v1:PodDisruptionBudget", "llm-pretrain-llm-pretrain-pdb"),
    ]);
    // The RayJob kept its name: no alias.
    expect(named(seen.find((r) => r.type === "kubernetes:ray.io/v1:RayJob")!)).toEqual([]);
  });
});
