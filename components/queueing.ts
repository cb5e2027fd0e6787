/**
 * `JobQueue`: Kueue (pinned chart 0.19.2) and the stack's queue: one ResourceFlavor per pool, the ClusterQueue with each
 * pool's quota, and the LocalQueue the RayJobs name. Thin: the release comes from `core/platform/queueing.ts` and the
 * objects from `workloads/queue/kueue.ts`, the same ones `ray-gpu render` writes.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { kueueRelease, type QueuePlan } from "../core/platform/queueing";
import { queueObjects } from "../workloads/queue/kueue";
import { MANAGED_BY } from "../workloads/k8s/labels";
import { helmRelease } from "./addons";
import { childOptions, nameChecks, withOrdering, type OrderingSource } from "./child-options";

/** Arguments of {@link JobQueue}. */
export interface JobQueueArgs {
  /** The queue: quotas per pool and the workload namespace (`planQueue(pools, namespace)`). */
  readonly queue: QueuePlan;
  /**
   * CPU pool to run Kueue's controller on (`ray-gpu.io/pool=<name>`).
   * @default - any node
   */
  readonly cpuPool?: string;
  /**
   * The platform it runs on: its provider, and the nodes and CoreDNS Kueue's pods need (`platform.addonOptions()`).
   * @default - none: they come through the resource options
   */
  readonly platform?: Pick<OrderingSource, "addonOptions">;
}

/**
 * Kueue and the stack's queue. RayJobs labelled `kueue.x-k8s.io/queue-name: <queue.name>` wait in it until their
 * pool's quota admits them; pass the JobQueue to a RayWorkload's `dependsOn`. Kueue's webhooks refuse RayJobs while
 * its controller is down (failurePolicy Fail), so the queue objects wait for the release.
 */
export class JobQueue extends pulumi.ComponentResource {
  /** The Kueue Helm release. */
  public readonly release: k8s.helm.v3.Release;
  /** Name of the LocalQueue in the workload namespace. */
  public readonly localQueueName: string;

  constructor(name: string, args: JobQueueArgs, options?: pulumi.ComponentResourceOptions) {
    const names = nameChecks(withOrdering(args.platform?.addonOptions(), options));
    const opts = names.opts;
    super("ray-gpu:index:JobQueue", name, {}, opts);
    names.own(this);
    this.release = helmRelease(name, kueueRelease(args.cpuPool, args.queue.namespace), childOptions(this, opts));
    for (const obj of queueObjects(args.queue, MANAGED_BY)) {
      new k8s.apiextensions.CustomResource(
        `${name}-${obj.kind.toLowerCase()}-${obj.metadata.name}`,
        { apiVersion: obj.apiVersion, kind: obj.kind, metadata: obj.metadata, spec: obj.spec },
        childOptions(this, opts, [this.release]),
      );
    }
    this.localQueueName = args.queue.name;
    names.report(`JobQueue ${name}`);
    this.registerOutputs({ releaseName: this.release.name, localQueueName: this.localQueueName });
  }
}
