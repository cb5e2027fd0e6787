/**
 * Every Ray resource and its renderer and checks. Exhaustive: a new resource (say a RayService) fails to compile
 * until it has a row. A kind's strategy names the resource it renders to (`KindStrategy.rayResource`).
 */
import type { ConfigIssue } from "../core/errors";
import type { PoolsPlan } from "../core/pools";
import type { KubeObject } from "./k8s/types";
import { RAY_JOB } from "./rayjob/resource";
import type { RayResource, RayResourceKind, RayResourceObjects } from "./resources/api";

export const RAY_RESOURCES: { readonly [R in RayResourceKind]: RayResource<R> } = {
  RayJob: RAY_JOB,
};

/** The Ray resource of kind `kind`. */
export function rayResourceOf<R extends RayResourceKind>(kind: R): RayResource<R> {
  return RAY_RESOURCES[kind];
}

const isRayResource = (obj: KubeObject): obj is RayResourceObjects[RayResourceKind] =>
  Object.hasOwn(RAY_RESOURCES, obj.kind);

/** The problems KubeRay and the scheduler would find in the Ray resources among `objects`. */
export function checkRayResources(objects: readonly KubeObject[], pools: PoolsPlan): ConfigIssue[] {
  return objects.filter(isRayResource).flatMap((obj) => rayResourceOf(obj.kind).check(obj, pools));
}
