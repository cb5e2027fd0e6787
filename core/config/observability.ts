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

/** A DNS label: letters, digits and `-` inside, at most 63 characters. */
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
/** RFC 3986 path characters (unreserved, sub-delims, `:`, `@`, `%` of an escape, `/`), `-` last; a query adds `?`. */
const PATH_CHARS = "A-Za-z0-9._~!$&'()*+,;=:@%/-";
/**
 * An HTTPS URL as it may be written to Helm values, a RayJob and Pulumi's state: `https://`, a DNS host name (labels
 * of letters, digits and `-`, at least two; an IPv4 address reads as one), an optional port, a path of RFC 3986 path
 * characters and a query; no user or password, no fragment. Any other shape, and a query key that carries a
 * credential, is refused.
 */
const HTTPS_URL = new RegExp(
  `^https://${LABEL}(?:\\.${LABEL})+(?::[0-9]{1,5})?(?:/[${PATH_CHARS}]*)?(?:\\?[?${PATH_CHARS}]*)?$`,
);

/**
 * Query keys that carry a credential (`token`, `api_key`, `X-Amz-Signature`, `sig`, `password`, `auth`), case and
 * separators ignored.
 */
const CREDENTIAL_QUERY_KEY = /token|key|secret|passw|signature|^sig$|auth|credential|^x-?amz-/i;

/** Where a URL carries a credential, in words, or undefined. */
function urlCredential(url: string): string | undefined {
  const authority = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, "").split(/[/?#]/, 1)[0] ?? "";
  if (authority.includes("@")) return "carries a user or password";
  const query = url.includes("?") ? url.slice(url.indexOf("?") + 1).split("#", 1)[0]! : "";
  const keys = [...new URLSearchParams(query).keys()].map((k) => k.replace(/[-_.]/g, ""));
  return keys.some((k) => CREDENTIAL_QUERY_KEY.test(k)) ? "carries a credential in its query" : undefined;
}

/** Why a URL is not {@link HTTPS_URL}: a credential in it (never echo the URL then), or its shape. */
export type HttpsUrlProblem = { readonly kind: "credential" | "shape"; readonly why: string };

/**
 * Why `url` is not an HTTPS URL without a credential, or undefined: the grammar the remote-write URL and the
 * environment's index and hub redirects (`./env-rules.ts`) share. A credential is looked for under any scheme, so an
 * `http://user:pass@...` is never echoed either.
 */
export function httpsUrlProblem(url: string): HttpsUrlProblem | undefined {
  const credential = urlCredential(url);
  if (credential) return { kind: "credential", why: credential };
  if (!HTTPS_URL.test(url))
    return {
      kind: "shape",
      why: "must be https://<DNS host name>[:port][/path][?query] (no user, password or fragment)",
    };
  return undefined;
}

/** `observability.remoteWrite.url`: {@link httpsUrlProblem}, and never echoed when it has a credential. */
const remoteWriteUrl = z.string().superRefine((url, ctx) => {
  const problem = httpsUrlProblem(url);
  if (problem?.kind === "credential")
    ctx.addIssue({
      code: "custom",
      message:
        `${problem.why}, which would be written to the Helm values and Pulumi's state in clear text: give the ` +
        "endpoint alone; Amazon Managed Service for Prometheus is signed with SigV4 by Prometheus's own role",
      params: { redact: true },
    });
  else if (problem)
    ctx.addIssue({
      code: "custom",
      message: `${problem.why}, e.g. an Amazon Managed Service for Prometheus remote_write URL`,
    });
});

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
      url: remoteWriteUrl,
    })
    .optional(),
});

/** `ray-gpu:platform.observability`, validated, defaults applied. */
export type { ObservabilityConfig } from "./types";
