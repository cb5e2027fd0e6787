/*
 * The names of the deployment environments, in a module with no dependencies, so that the CLI can list them in its
 * help without loading the schemas.
 */

/** Deployment environments; each has a profile in `core/environments.ts`. */
export const ENVIRONMENTS = ["dev", "prod"] as const;
/** A deployment environment: `dev` or `prod`, each with a profile in `ENVIRONMENT_PROFILES`. */
export type Environment = (typeof ENVIRONMENTS)[number];
