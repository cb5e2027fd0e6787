/**
 * The alert rules under the real `promtool test rules` (Debian's prometheus package): for each rule, synthetic series
 * in which it fires for one job, node or GPU and stays silent for another. The rules are the ones the stack renders
 * (stackRuleGroup, jobRuleGroup), written as a Prometheus rule file. The hung, starved and idle alerts have series of
 * their own (job-states-series.ts), where every job is in one state at most.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { jobRuleGroup, stackRuleGroup, type AlertRule, type RuleGroup } from "../../../core/observability/rules";
import { findTool, missingReason } from "../../helpers/tools";
import { gpu, NS, pod, series, STATE_INPUT, STATE_JOBS, stateCases } from "./job-states-series";

const promtool = findTool("promtool", "PROMTOOL");
const skip = missingReason("promtool", promtool, "apt-get install prometheus");
const run = promisify(execFile);

const groups: RuleGroup[] = [
  stackRuleGroup({ namespace: NS, scaleDownUnneededSeconds: 600, scaleToZeroPools: ["a10g"] }),
  jobRuleGroup({
    workload: "train",
    namespace: NS,
    kind: "TrainingJob",
    preRunningDeadlineSeconds: 2700,
    noSpillBecause: "the trainer passes no large objects",
  }),
  jobRuleGroup({
    workload: "embed",
    namespace: NS,
    kind: "EmbeddingPipeline",
    gpuUtilizationTargetPercent: 80,
    preRunningDeadlineSeconds: 2700,
    noSpillBecause: "2 x 56 blocks x 13 MiB = 1.4 GiB <= 6 GiB limit: nothing spills",
  }),
  ...STATE_JOBS.map(jobRuleGroup),
];

/** Two jobs: `train` (pods train-w0 on n1, train-w1 pending) misbehaves in every way; `embed` (embed-w0) is healthy but OOM-killed once. */
const INPUT = [
  series("kube_pod_labels", { ...pod("train-w0"), label_ray_gpu_io_workload: "train" }, "1x60"),
  series("kube_pod_labels", { ...pod("train-w1"), label_ray_gpu_io_workload: "train" }, "1x60"),
  series("kube_pod_labels", { ...pod("embed-w0"), label_ray_gpu_io_workload: "embed" }, "1x60"),
  series("DCGM_FI_DEV_GPU_UTIL", gpu("train-w0"), "50x60"),
  series("DCGM_FI_DEV_GPU_UTIL", gpu("embed-w0"), "95x60"),
  series("DCGM_FI_DEV_FB_USED", gpu("train-w0"), "22500x60"),
  series("DCGM_FI_DEV_FB_FREE", gpu("train-w0"), "300x60"),
  series("DCGM_FI_DEV_FB_USED", gpu("embed-w0"), "12000x60"),
  series("DCGM_FI_DEV_FB_FREE", gpu("embed-w0"), "10800x60"),
  series(
    "ray_object_store_memory",
    { ...pod("train-w0"), workload: "train", Location: "SPILLED" },
    "0x5 1073741824x55",
  ),
  series("ray_object_store_memory", { ...pod("embed-w0"), workload: "embed", Location: "SPILLED" }, "0x60"),
  series("ray_object_store_memory", { ...pod("embed-w0"), workload: "embed", Location: "MMAP_SHM" }, "1073741824x60"),
  series("kube_pod_status_phase", { ...pod("train-w1"), phase: "Pending" }, "1x60"),
  series("kube_pod_status_phase", { ...pod("embed-w0"), phase: "Pending" }, "1x10 0x50"),
  series("kube_pod_container_status_restarts_total", { ...pod("embed-w0"), container: "ray-worker" }, "0x5 1x55"),
  series("kube_pod_container_status_restarts_total", { ...pod("train-w0"), container: "ray-worker" }, "0x60"),
  // a second kube-state-metrics replica reports the same OOM kill: still one alert
  series(
    "kube_pod_container_status_restarts_total",
    { ...pod("embed-w0"), container: "ray-worker", instance: "ksm-2" },
    "0x5 1x55",
  ),
  series(
    "kube_pod_container_status_last_terminated_reason",
    { ...pod("embed-w0"), container: "ray-worker", reason: "OOMKilled", instance: "ksm-2" },
    "0x5 1x55",
  ),
  series(
    "kube_pod_container_status_last_terminated_reason",
    { ...pod("embed-w0"), container: "ray-worker", reason: "OOMKilled" },
    "0x5 1x55",
  ),
  series("kube_node_labels", { node: "n1", label_ray_gpu_io_role: "gpu", label_ray_gpu_io_pool: "a10g" }, "1x60"),
  series("kube_node_labels", { node: "n2", label_ray_gpu_io_role: "gpu", label_ray_gpu_io_pool: "a10g" }, "1x60"),
  // a warm pool (minNodes > 0): the autoscaler keeps its minimum, so its idle node is no alert
  series("kube_node_labels", { node: "w1", label_ray_gpu_io_role: "gpu", label_ray_gpu_io_pool: "warm" }, "1x60"),
  series("kube_node_labels", { node: "s1", label_ray_gpu_io_role: "system" }, "1x60"),
  series("kube_pod_info", { ...pod("train-w0"), node: "n1" }, "1x60"),
];

/** The alert rule of that name (of that job's group, for a per-job rule named by its workload). */
const rule = (name: string, workload?: string): AlertRule =>
  groups
    .flatMap((g) => g.rules)
    .find(
      (r): r is AlertRule => "alert" in r && r.alert === name && [undefined, workload].includes(r.labels["workload"]),
    )!;

/** The rule's annotations as Prometheus expands them, given the alert's labels and its formatted `$value`. */
function annotations(name: string, labels: Record<string, string>, value: string): Record<string, string> {
  const expand = (t: string) =>
    t.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, k: string) => labels[k] ?? "").replace(/\{\{ \$value[^}]*\}\}/g, value);
  const a = rule(name, labels["workload"]).annotations;
  return { summary: expand(a.summary), description: expand(a.description) };
}

/** One expected alert: its labels (with the rule's severity and workload) and annotations. */
function fires(name: string, labels: Record<string, string>, value: string) {
  const all = { ...labels, ...rule(name, labels["workload"]).labels };
  return { exp_labels: all, exp_annotations: annotations(name, all, value) };
}

const CASES = [
  {
    alertname: "RayGpuJobLowUtilization",
    eval_time: "20m",
    exp_alerts: [fires("RayGpuJobLowUtilization", { namespace: NS, workload: "train" }, "50.0")],
  },
  // 15 minutes is the rule's `for`: at 14m it is pending, not firing.
  { alertname: "RayGpuJobLowUtilization", eval_time: "14m", exp_alerts: [] },
  {
    alertname: "RayGpuJobSpilling",
    eval_time: "10m",
    exp_alerts: [fires("RayGpuJobSpilling", { namespace: NS, workload: "train" }, "1Gi")],
  },
  { alertname: "RayGpuJobSpilling", eval_time: "5m", exp_alerts: [] },
  // 75% of a 45 minute deadline: 33m45s. embed-w0 was pending for 10 minutes only.
  {
    alertname: "RayGpuJobPendingTooLong",
    eval_time: "35m",
    exp_alerts: [fires("RayGpuJobPendingTooLong", { namespace: NS, workload: "train" }, "1")],
  },
  { alertname: "RayGpuJobPendingTooLong", eval_time: "33m", exp_alerts: [] },
  {
    alertname: "RayGpuMemoryNearFull",
    eval_time: "10m",
    exp_alerts: [fires("RayGpuMemoryNearFull", { ...gpu("train-w0"), workload: "train" }, "98.68%")],
  },
  {
    alertname: "RayGpuContainerOOMKilled",
    eval_time: "10m",
    exp_alerts: [
      fires("RayGpuContainerOOMKilled", { ...pod("embed-w0"), container: "ray-worker", workload: "embed" }, "1"),
    ],
  },
  // The restart left the 10-minute window: the alert resolves.
  { alertname: "RayGpuContainerOOMKilled", eval_time: "20m", exp_alerts: [] },
  // Scale-down 10m + 5m grace: n2 (no job pod) fires at 15m; n1 runs train-w0; s1 is no GPU node.
  { alertname: "RayGpuNodeIdle", eval_time: "16m", exp_alerts: [fires("RayGpuNodeIdle", { node: "n2" }, "1")] },
  { alertname: "RayGpuNodeIdle", eval_time: "14m", exp_alerts: [] },
];

const STATE_CASES = stateCases(fires);

/** Writes the groups and the tests (series with their cases) for promtool; returns promtool's test command's result. */
async function promtoolTest(ruleGroups: readonly RuleGroup[], tests: { input: unknown[]; cases: unknown[] }[]) {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-rules-"));
  writeFileSync(join(dir, "rules.yaml"), stringify({ groups: ruleGroups }));
  writeFileSync(
    join(dir, "tests.yaml"),
    stringify({
      rule_files: ["rules.yaml"],
      evaluation_interval: "1m",
      tests: tests.map((t) => ({ interval: "1m", input_series: t.input, alert_rule_test: t.cases })),
    }),
  );
  await run(promtool!, ["check", "rules", "rules.yaml"], { cwd: dir });
  return run(promtool!, ["test", "rules", "tests.yaml"], { cwd: dir }).catch(
    (e: { stdout: string; stderr: string; code: number }) => e,
  );
}

/** The groups with one alert's expression changed. */
const withExpr = (name: string, change: (expr: string) => string) =>
  groups.map((g) => ({
    ...g,
    rules: g.rules.map((x) => ("alert" in x && x.alert === name ? { ...x, expr: change(x.expr) } : x)),
  }));

describe.skipIf(skip)("alert rules under promtool test rules", () => {
  it("every rule fires where it should and stays silent where it should not", async () => {
    const r = await promtoolTest(groups, [
      { input: INPUT, cases: CASES },
      { input: STATE_INPUT, cases: STATE_CASES },
    ]);
    expect(`${r.stdout}${r.stderr}`).toMatch(/SUCCESS/);
    // Every alert of every group is exercised, firing at least once.
    const alerts = groups.flatMap((g) => g.rules).flatMap((x) => ("alert" in x ? [x.alert] : []));
    for (const a of new Set(alerts))
      expect(
        [...CASES, ...STATE_CASES].some((c) => c.alertname === a && c.exp_alerts.length > 0),
        a,
      ).toBe(true);
  });

  it("promtool fails the same test when a threshold is wrong (the test can fail)", async () => {
    const broken = withExpr("RayGpuJobLowUtilization", (e) => e.replace(/< \d+$/, "< 40"));
    const r = await promtoolTest(broken, [{ input: INPUT, cases: CASES.slice(0, 1) }]);
    expect(r).toMatchObject({ code: 1 });
  });

  it.each([
    // without its exclusions, the job that is hung and waiting at once fires starved too
    ["RayGpuJobStarved", (e: string) => e.split(" unless on")[0]!],
    // without its step clause, the 100%-busy job at low power whose steps advance fires hung
    ["RayGpuJobHung", (e: string) => e.slice(0, e.lastIndexOf(" and on"))],
  ])("promtool fails the state cases when %s loses a clause", async (name, change) => {
    const r = await promtoolTest(withExpr(name, change), [{ input: STATE_INPUT, cases: STATE_CASES }]);
    expect(r).toMatchObject({ code: 1 });
    expect(`${r.stdout}${r.stderr}`).toMatch(new RegExp(`alertname: ${name}, time: 25m`));
  });
});
