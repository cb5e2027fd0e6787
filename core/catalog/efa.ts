/**
 * EFA (Elastic Fabric Adapter) on EKS: the Kubernetes names of what an EFA node offers, what it reserves at boot, and
 * what a worker pod of a multi-node job requests. Pure data; `../pools.ts` plans the pools from it, `../platform/` the
 * node groups and the device plugin, `../cluster/` the workers.
 *
 * Sources: see docs/platform.md, "EFA".
 */

/** The extended resource the EFA device plugin advertises, one per EFA interface of the node. */
export const EFA_RESOURCE = "vpc.amazonaws.com/efa";
/** The resource of 2 MiB hugepages (the page size libfabric's EFA provider allocates its buffers in). */
export const HUGEPAGES_2MI_RESOURCE = "hugepages-2Mi";

/** What an EFA node and an EFA worker pod take in hugepages. */
export interface EfaHugepages {
  /** 2 MiB pages the node reserves at boot (`vm.nr_hugepages`), before the kubelet starts. */
  readonly nodePages: number;
  /** MiB of hugepages each worker pod requests (and limits to: Kubernetes requires both equal). */
  readonly podMiB: number;
  readonly source: string;
}

/**
 * The hugepages of an EFA node and of its worker pod. The pod's figure is the one AWS's EFA examples request; the node
 * reserves 8 pages more, as eksctl's EFA bootstrap does, so the pod's request always fits.
 */
export const EFA_HUGEPAGES: EfaHugepages = {
  nodePages: 5128,
  podMiB: 5120,
  source: "EKS user guide, 'Run machine learning training on Amazon EKS with Elastic Fabric Adapter' (pod spec)",
};

/** MiB of one page of {@link HUGEPAGES_2MI_RESOURCE}. */
export const HUGEPAGE_MIB = 2;

/** MiB of memory a node's reserved hugepages take out of its allocatable (the kubelet subtracts pre-allocated pages). */
export const efaNodeHugepagesMiB = (h: EfaHugepages = EFA_HUGEPAGES) => h.nodePages * HUGEPAGE_MIB;
