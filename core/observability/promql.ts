/**
 * The shapes of Prometheus rules and the PromQL pieces every rule file of ours builds on: label matchers, durations and
 * the join that names a pod's job. Pure.
 */
import { RECORDED } from "./metrics";

/** A recording rule. */
export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
}

/** An alerting rule, as Prometheus (and the PrometheusRule CRD) takes it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  /** How long the condition must hold, a Prometheus duration ("15m"). */
  readonly for: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: { readonly summary: string; readonly description: string };
}

/** One rule group. */
export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly (RecordingRule | AlertRule)[];
}

/** Seconds as a Prometheus duration: 2700 → "45m", 5400 → "1h30m", 90 → "1m30s". */
export function promDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const parts: [number, string][] = [
    [Math.floor(s / 3600), "h"],
    [Math.floor((s % 3600) / 60), "m"],
    [s % 60, "s"],
  ];
  const text = parts
    .filter(([n]) => n > 0)
    .map(([n, u]) => `${n}${u}`)
    .join("");
  return text || "0s";
}

/** A Prometheus-style duration ("10m", "1h30m", "45s") in seconds. */
export function durationSeconds(text: string): number {
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1 };
  const parts = [...text.matchAll(/(\d+)([hms])/g)];
  if (parts.map((p) => p[0]).join("") !== text || parts.length === 0) throw new Error(`not a duration: ${text}`);
  return parts.reduce((n, p) => n + Number(p[1]) * unit[p[2]!]!, 0);
}

/** A label matcher list: `{a="x", b!=""}`. */
export const sel = (m: Readonly<Record<string, string>>) =>
  `{${Object.entries(m)
    .map(([k, v]) => (v.startsWith("!=") ? `${k}!="${v.slice(2)}"` : `${k}="${v}"`))
    .join(", ")}}`;

/**
 * `expr`, with the workload label joined from its pod (`* on (namespace, pod) group_left (workload) …`); `match`
 * selects the pods (the namespace, and a workload for one job's rules).
 */
export const byWorkload = (expr: string, match: Readonly<Record<string, string>>) =>
  `${expr} * on (namespace, pod) group_left (workload) ${RECORDED.podWorkload}${sel(match)}`;
