/** Metadata of every Ray pod's template. */

/**
 * Annotations of every Ray pod and the submitter: the Cluster Autoscaler never removes a node they run on
 * (kubernetes/autoscaler FAQ, "What types of pods can prevent CA from removing a node?"), so a scale-down never takes
 * a running job's GPU workers, head or submitter.
 */
export const POD_ANNOTATIONS = { "cluster-autoscaler.kubernetes.io/safe-to-evict": "false" } as const;

/** A pod template's metadata: `labels` and {@link POD_ANNOTATIONS}. */
export const podMetadata = (labels: Readonly<Record<string, string>>) => ({
  labels: { ...labels },
  annotations: { ...POD_ANNOTATIONS },
});
