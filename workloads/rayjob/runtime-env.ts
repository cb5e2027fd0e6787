/** KubeRay's `runtimeEnvYAML`: the Ray runtime environment the submitter passes with the job. */
import { stableYaml } from "../../core/serialize";

/** Ray's runtime-env field names (`pip`, `env_vars`), keys sorted so previews stay byte-stable; undefined when empty. */
export function runtimeEnvYAML(env: {
  readonly pip?: readonly string[] | undefined;
  readonly envVars?: Readonly<Record<string, string>> | undefined;
}): string | undefined {
  const doc = {
    ...(env.pip ? { pip: [...env.pip] } : {}),
    ...(env.envVars && Object.keys(env.envVars).length > 0 ? { env_vars: { ...env.envVars } } : {}),
  };
  return Object.keys(doc).length > 0 ? stableYaml(doc) : undefined;
}
