/**
 * The Kubernetes namespaces the platform itself uses: Kubernetes' own, and those the add-ons are installed into. The
 * releases take their namespace from here, and the workload namespace may be none of them (a job's default-deny
 * policies and Pod Security labels would land on the add-ons; node-exporter, for one, needs host namespaces that
 * baseline enforcement refuses).
 */

/** Namespaces of the add-ons the platform installs, by add-on. */
export const ADDON_NAMESPACES = {
  /** NVIDIA device plugin, Cluster Autoscaler, EBS CSI controller, and the EKS managed add-ons. */
  kubeSystem: "kube-system",
  kuberayOperator: "kuberay-system",
  kueue: "kueue-system",
  /** Prometheus, Grafana, kube-state-metrics, node-exporter and the DCGM exporter. */
  monitoring: "monitoring",
} as const;

/** Namespaces Kubernetes itself creates in every cluster. */
export const KUBERNETES_NAMESPACES = ["default", "kube-node-lease", "kube-public", "kube-system"] as const;

/** Every namespace a stack's jobs may not run in, sorted. */
export const RESERVED_NAMESPACES: readonly string[] = [
  ...new Set<string>([...KUBERNETES_NAMESPACES, ...Object.values(ADDON_NAMESPACES)]),
].sort();

/**
 * Pod Security Admission labels of the `monitoring` namespace. Enforced at `privileged`, the only level its pods
 * meet: kube-prometheus-stack's node-exporter runs with `hostNetwork`, `hostPID` and `hostPath` mounts of `/proc`,
 * `/sys` and `/` (chart prometheus-node-exporter, values `hostNetwork`, `hostPID`, `hostRootFsMount`), and the DCGM
 * exporter adds `SYS_ADMIN` for profiling metrics (dcgm-exporter chart values `securityContext.capabilities`), both
 * refused by `baseline` (Pod Security Standards, Baseline: Host Namespaces, HostPath Volumes, Capabilities). `warn`
 * and `audit` at `restricted` name every pod that falls short, in `kubectl` and the audit log.
 */
export const MONITORING_POD_SECURITY_LABELS = {
  "pod-security.kubernetes.io/enforce": "privileged",
  "pod-security.kubernetes.io/warn": "restricted",
  "pod-security.kubernetes.io/audit": "restricted",
} as const;
