/**
 * `ray-gpu:platform.observability`: GPU and Ray metrics, alerts and dashboards (see docs/observability.md). The
 * embedded default runs Prometheus and Grafana on the CPU pool; `remoteWrite` sends every sample to an existing
 * Prometheus (Amazon Managed Service for Prometheus, say) and runs no Grafana.
 */
import { z } from "zod";

/**
 * An Amazon Managed Service for Prometheus remote-write URL:
 * `https://aps-workspaces.<region>.amazonaws.com/workspaces/<workspace-id>/api/v1/remote_write` (AMP user guide,
 * "Ingest Prometheus metrics to the workspace").
 */
export const AMP_REMOTE_WRITE =
  /^https:\/\/aps-workspaces\.([a-z]{2}(?:-gov)?-[a-z]+-\d)\.amazonaws\.com\/workspaces\/(ws-[A-Za-z0-9-]+)\/api\/v1\/remote_write$/;

/** @internal */
export const ObservabilitySchema = z.strictObject({
  /**
   * Install the NVIDIA DCGM exporter on the GPU nodes, Prometheus (kube-prometheus-stack) on the CPU pool, the Ray
   * PodMonitors, the stack's and each job's alert rules and the dashboards.
   * @default true
   */
  enabled: z.boolean().default(true),
  /**
   * Days Prometheus keeps samples (its `retention`).
   * @default 15
   */
  retentionDays: z.number().int().min(1).max(3650).default(15),
  /**
   * Prometheus's volume (gp3) in GiB; Prometheus also stops at 85% of it (`retentionSize`), whichever comes first.
   * @default 50
   */
  storageGiB: z.number().int().min(10).max(16384).default(50),
  /**
   * Send every sample to an existing Prometheus instead of keeping the embedded Grafana. An Amazon Managed Service for
   * Prometheus URL is signed with SigV4 by Prometheus's own Pod Identity role, allowed `aps:RemoteWrite` on that
   * workspace only; any other URL must be an HTTPS endpoint that needs no credentials from us.
   * @default - none: Prometheus and Grafana in the cluster
   */
  remoteWrite: z
    .strictObject({
      /** The remote-write endpoint (HTTPS). */
      url: z
        .string()
        .regex(
          /^https:\/\/[^\s/]+(\/\S*)?$/,
          "must be an https:// URL, e.g. an Amazon Managed Service for Prometheus remote_write URL",
        ),
    })
    .optional(),
});

/** `ray-gpu:platform.observability`, validated, defaults applied. */
export type { ObservabilityConfig } from "./types";
