/**
 * Kubernetes minor versions of Amazon EKS, with their support dates: the table `cluster.kubernetesVersion` is checked
 * against. A version is accepted while EKS still runs it (standard or extended support) on {@link EKS_VERSIONS_AS_OF};
 * the date is fixed so plans do not change with the clock. Bump both together.
 *
 * Sources: EKS User Guide, "Understand the Kubernetes version lifecycle on EKS" (standard support 14 months from the
 * EKS release, extended support 12 more), https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html;
 * dates as listed by https://endoflife.date/amazon-eks (1.30-1.35). 1.36: released on EKS 2026-06-02; standard support
 * ends 2027-08-02 (14 months), extended 2028-08-02.
 */

/** One EKS Kubernetes minor version. Dates are ISO `YYYY-MM-DD`. */
export interface EksVersion {
  readonly released: string;
  readonly endOfStandardSupport: string;
  readonly endOfExtendedSupport: string;
}

/** The day the table was last checked; "supported" means on this day. */
export const EKS_VERSIONS_AS_OF = "2026-12-01";

export const EKS_VERSIONS = {
  "1.30": { released: "2024-05-23", endOfStandardSupport: "2025-07-23", endOfExtendedSupport: "2026-07-23" },
  "1.31": { released: "2024-09-26", endOfStandardSupport: "2025-11-26", endOfExtendedSupport: "2026-11-26" },
  "1.32": { released: "2025-01-25", endOfStandardSupport: "2026-03-23", endOfExtendedSupport: "2027-03-23" },
  "1.33": { released: "2025-05-28", endOfStandardSupport: "2026-07-29", endOfExtendedSupport: "2027-07-29" },
  "1.34": { released: "2025-10-06", endOfStandardSupport: "2026-12-02", endOfExtendedSupport: "2027-12-02" },
  "1.35": { released: "2026-01-28", endOfStandardSupport: "2027-03-27", endOfExtendedSupport: "2028-03-27" },
  "1.36": { released: "2026-06-02", endOfStandardSupport: "2027-08-02", endOfExtendedSupport: "2028-08-02" },
} as const satisfies Readonly<Record<string, EksVersion>>;

export type EksKubernetesVersion = keyof typeof EKS_VERSIONS;

/** How EKS supports a version on {@link EKS_VERSIONS_AS_OF}. */
export function eksSupport(version: string): "standard" | "extended" | "ended" | "unknown" {
  const v = (EKS_VERSIONS as Readonly<Record<string, EksVersion>>)[version];
  if (v === undefined) return "unknown";
  if (EKS_VERSIONS_AS_OF < v.endOfStandardSupport) return "standard";
  if (EKS_VERSIONS_AS_OF < v.endOfExtendedSupport) return "extended";
  return "ended";
}

/** Versions in standard support on {@link EKS_VERSIONS_AS_OF}, oldest first: those a new cluster may use. */
export const STANDARD_EKS_VERSIONS: readonly string[] = Object.keys(EKS_VERSIONS).filter(
  (v) => eksSupport(v) === "standard",
);
