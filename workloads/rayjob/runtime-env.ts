/** KubeRay's `runtimeEnvYAML`: the Ray runtime environment the submitter passes with the job. */
import { ConfigError } from "../../core/errors";
import type { Environment } from "../../core/config/environment-names";
import { pipInstallOptions, pipVerification, unverifiedPipIssues } from "../../core/config/pip";
import { stableYaml } from "../../core/serialize";

/**
 * Ray's runtime-env field names (`pip`, `env_vars`), keys sorted so previews stay byte-stable; undefined when empty.
 * Hashed requirements go in Ray's `pip` map with `--require-hashes` among pip's options (Ray 2.58
 * `parse_and_validate_pip`: `packages`, `pip_check`, `pip_install_options`); unhashed ones stay a plain list.
 */
export function runtimeEnvYAML(env: {
  readonly pip?: readonly string[] | undefined;
  readonly envVars?: Readonly<Record<string, string>> | undefined;
}): string | undefined {
  const verification = pipVerification(env.pip);
  const pip =
    verification === "hash-checked"
      ? { packages: [...env.pip!], pip_check: false, pip_install_options: pipInstallOptions(true) }
      : env.pip && [...env.pip];
  const doc = {
    ...(pip ? { pip } : {}),
    ...(env.envVars && Object.keys(env.envVars).length > 0 ? { env_vars: { ...env.envVars } } : {}),
  };
  return Object.keys(doc).length > 0 ? stableYaml(doc) : undefined;
}

/**
 * Refuses, for a job outside a stack's config (a TypeScript caller's), pip requirements without hashes where its
 * environment installs nothing unverified; a stack's config is refused so before it plans (core/config/stack.ts).
 * @throws ConfigError naming each requirement at `<path>.runtimeEnv.pip[i]`.
 */
export function checkPipVerified(pip: readonly string[] | undefined, environment: Environment, path: string): void {
  const issues = unverifiedPipIssues(pip, environment);
  if (issues.length === 0) return;
  throw new ConfigError(
    issues.map((i) => ({ path: `${path}.runtimeEnv.pip[${i.index}]`, message: i.message, value: pip![i.index] })),
  );
}
