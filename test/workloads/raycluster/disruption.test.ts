/**
 * The job's PodDisruptionBudget, checked the way the Eviction API decides: a pod no budget selects may be evicted; a
 * selected one only while the budget's healthy pods exceed `minAvailable` (policy/v1, "Disruptions"). Every pod of a
 * rendered job is taken as running and healthy, the moment a drain comes.
 */
import { describe, expect, it } from "vitest";
import type { LabelSelector, PodDisruptionBudget, RayJob } from "../../../workloads/k8s/types";
import { EVICT_ON_NOTICE_LABEL } from "../../../workloads/raycluster/preemption";
import { planStack } from "../../../workloads/stack";
import { repoStack, runtime } from "../../helpers/fixtures";

type Labels = Readonly<Record<string, string>>;
interface Pod {
  readonly role: "head" | "worker" | "submitter";
  readonly labels: Labels;
  readonly spotHook: boolean;
}

/** metav1.LabelSelector semantics: every label and every expression must match. */
function selects(selector: LabelSelector, labels: Labels): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every((e) => {
    const has = e.key in labels;
    if (e.operator === "Exists") return has;
    if (e.operator === "DoesNotExist") return !has;
    const inValues = has && (e.values ?? []).includes(labels[e.key] as string);
    return e.operator === "In" ? inValues : !inValues;
  });
  return byLabel && byExpression;
}

/** The pods KubeRay and the Job controller create for a RayJob: one head, each worker replica, the submitter. */
function podsOf(job: RayJob): Pod[] {
  const spec = job.spec.rayClusterSpec;
  const labelsOf = (t: { metadata?: { labels?: Labels } }) => ({ ...(t.metadata?.labels ?? {}) });
  const workers = spec.workerGroupSpecs.flatMap((g) =>
    Array.from({ length: g.replicas }, () => ({
      role: "worker" as const,
      labels: labelsOf(g.template),
      spotHook: g.template.spec.containers[0]?.lifecycle?.preStop?.exec?.command.join(" ").includes("notice") ?? false,
    })),
  );
  return [
    { role: "head", labels: labelsOf(spec.headGroupSpec.template), spotHook: false },
    ...workers,
    { role: "submitter", labels: labelsOf(job.spec.submitterPodTemplate ?? {}), spotHook: false },
  ];
}

/** Whether the Eviction API lets a drain evict `pod` now, with all of `pods` healthy. */
function evictable(pod: Pod, pods: readonly Pod[], budget: PodDisruptionBudget): boolean {
  if (!selects(budget.spec.selector, pod.labels)) return true;
  const healthy = pods.filter((p) => selects(budget.spec.selector, p.labels)).length;
  return healthy - budget.spec.minAvailable >= 1;
}

function jobsOf(stack: "dev" | "prod") {
  const objects = planStack(repoStack(stack), { runtime }).objects.flatMap((o) => o.objects);
  const jobs = objects.filter((o): o is RayJob => o.kind === "RayJob");
  return jobs.map((job) => {
    const budget = objects.find(
      (o): o is PodDisruptionBudget => o.kind === "PodDisruptionBudget" && o.metadata.name === job.metadata.name,
    );
    if (!budget) throw new Error(`no PodDisruptionBudget for ${job.metadata.name}`);
    return { job, budget, pods: podsOf(job) };
  });
}

describe("the job's PodDisruptionBudget under a drain", () => {
  it("lets a drain evict each spot worker, whose hook then checkpoints, and holds the head and submitter (dev)", () => {
    const jobs = jobsOf("dev");
    const spotJobs = jobs.filter(({ pods }) => pods.some((p) => p.spotHook));
    expect(spotJobs.length).toBeGreaterThan(0);
    for (const { job, budget, pods } of spotJobs) {
      const verdicts = pods.map((p) => [p.role, evictable(p, pods, budget)]);
      const expected = pods.map((p) => [p.role, p.role === "worker"]);
      expect(verdicts, job.metadata.name).toEqual(expected);
      // The hook's pods and the label the budget leaves out are the same pods.
      for (const p of pods)
        expect(p.labels[EVICT_ON_NOTICE_LABEL.key] === EVICT_ON_NOTICE_LABEL.value).toBe(p.spotHook);
    }
  });

  it("evicts no pod of a job on on-demand workers while it runs (prod)", () => {
    const jobs = jobsOf("prod");
    expect(jobs.length).toBeGreaterThan(0);
    for (const { job, budget, pods } of jobs) {
      expect(
        pods.some((p) => p.spotHook),
        job.metadata.name,
      ).toBe(false);
      expect(
        pods.map((p) => evictable(p, pods, budget)),
        job.metadata.name,
      ).toEqual(pods.map(() => false));
    }
  });

  it("selects nothing beyond its own job's pods", () => {
    const jobs = jobsOf("dev");
    for (const { job, budget } of jobs)
      for (const other of jobs.filter((o) => o.job !== job))
        expect(other.pods.filter((p) => selects(budget.spec.selector, p.labels))).toEqual([]);
  });
});
