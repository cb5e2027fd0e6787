/** Labels of the objects we render. */

/** Labels every rendered object carries. */
export const MANAGED_BY = { "app.kubernetes.io/managed-by": "pulumi-ray-gpu" } as const;

/** Label of every object and pod of a workload; the PodDisruptionBudget selects the job's pods by it. */
export const WORKLOAD_LABEL = "ray-gpu.io/workload";
