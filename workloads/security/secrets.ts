/**
 * A workload's secret variables, resolved to Secret references: an existing Secret by name, or the Secret the stack
 * creates for the workload from Pulumi secret config (`<workload>-secrets`, one key per variable).
 */
import type { SecretEnvSource } from "../../core/config/types";
import type { EnvVar } from "../k8s/types";

/** A variable's Secret and key. */
export interface SecretRef {
  readonly secretName: string;
  readonly key: string;
}

/** Pulumi config namespace of secret values named without one (`pulumi config set --secret ray-gpu-secrets:hfToken`). */
export const SECRETS_NAMESPACE = "ray-gpu-secrets";

/** Name of the Secret the stack creates for a workload's `pulumiConfig` variables. */
export const workloadSecretName = (workload: string): string => `${workload}-secrets`;

/** Each secret variable's Secret and key. */
export function resolveSecretEnv(
  workload: string,
  secretEnv: Readonly<Record<string, SecretEnvSource>>,
): Record<string, SecretRef> {
  return Object.fromEntries(
    Object.entries(secretEnv).map(([name, source]) => [
      name,
      "pulumiConfig" in source ? { secretName: workloadSecretName(workload), key: name } : source,
    ]),
  );
}

/** The Pulumi config keys a workload's Secret is built from: variable name to config key. */
export function pulumiConfigSecrets(secretEnv: Readonly<Record<string, SecretEnvSource>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(secretEnv).flatMap(([name, s]) => ("pulumiConfig" in s ? [[name, s.pulumiConfig]] : [])),
  );
}

/** `valueFrom.secretKeyRef` variables, sorted by name. */
export const secretEnvVars = (refs: Readonly<Record<string, SecretRef>>): EnvVar[] =>
  Object.keys(refs)
    .sort()
    .map((name) => ({ name, valueFrom: { secretKeyRef: { name: refs[name]!.secretName, key: refs[name]!.key } } }));
