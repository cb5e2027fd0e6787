/**
 * A Ray resource a workload kind renders to (KubeRay's RayJob today; a RayService for online inference would be the
 * next): how it is rendered from the planned cluster and what KubeRay and the scheduler would refuse in it. A kind's
 * strategy names its resource; the table in `../ray-resources.ts` maps each name to its renderer and checks.
 */
import type { ConfigIssue } from "../../core/errors";
import type { PoolsPlan } from "../../core/pools";
import type { KubeObject, RayJob } from "../k8s/types";
import type { RayClusterInput } from "../raycluster/input";

/** Every Ray resource we render, by its Kubernetes kind. */
export interface RayResourceObjects {
  readonly RayJob: RayJob;
}
export type RayResourceKind = keyof RayResourceObjects;

/** Input of a Ray resource: its cluster, and the workload it runs. */
export interface RayResourceInput extends RayClusterInput {
  /** The workload's name: the resource's, and the label of every object and pod of it. */
  readonly name: string;
  readonly namespace: string;
  /** The workload kind (`TrainingJob`, ...), as the `ray-gpu.io/kind` label. */
  readonly kind: string;
  readonly environment: string;
  /** The command the Ray job runs. */
  readonly entrypoint: string;
  /** Ray runtime environment the job is submitted with (YAML). @default - none */
  readonly runtimeEnvYAML?: string | undefined;
  /**
   * Kueue LocalQueue to submit through: the resource is labelled with it and created suspended; Kueue unsuspends it
   * when the queue's quota admits it.
   * @default - none: the job starts at once
   */
  readonly queueName?: string | undefined;
}

/** One Ray resource kind: its renderer and its checks. */
export interface RayResource<R extends RayResourceKind> {
  readonly kind: R;
  /** The resource and the objects that go with it (its disruption budget and network policy), in that order. */
  render(input: RayResourceInput): readonly [RayResourceObjects[R], ...KubeObject[]];
  /** All problems of `resource` against the stack's pools; empty when KubeRay and the scheduler would accept it. */
  check(resource: RayResourceObjects[R], pools: PoolsPlan): ConfigIssue[];
}
