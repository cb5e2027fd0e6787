/**
 * A job's pip requirements (`runtimeEnv.pip`) and what verifies them. Each is one pinned project, optionally followed
 * by pip's per-requirement hash options (`torch==2.13.0 --hash=sha256:<64 hex digits>`, the form `pip hash` prints and
 * `pip-compile --generate-hashes` writes). Ray writes each entry as a line of the requirements file it installs from
 * (ray 2.58 `_private/runtime_env/pip.py`, `dependency_utils.gen_requirements_txt`), where pip reads these options.
 *
 * pip's hash-checking mode is all or nothing: a hash on one requirement turns it on, and then every package pip would
 * download, dependencies included, needs one ("Hashes are required in --require-hashes mode, but they are missing
 * from some requirements"; pip docs, *Secure installs*). So a job's requirements are hashed all or none, and hashed
 * ones are installed with `--require-hashes`: nothing unverified is installed, a dependency the image lacks included.
 * A prod job's requirements must be hashed (the environment profile's `unverifiedPip`, core/environments.ts); a dev
 * job may install unverified, and `ray-gpu plan` says so. Pure.
 */
import { ENVIRONMENT_PROFILES } from "../environments";
import type { Environment } from "./environment-names";

/** pip's hash algorithms with the hex digits of each digest (pip `_internal/utils/hashes.py`, `STRONG_HASHES`). */
const HASH_DIGITS = { sha256: 64, sha384: 96, sha512: 128 } as const;
const HASH_OPTION = Object.entries(HASH_DIGITS)
  .map(([alg, digits]) => `${alg}:[0-9a-f]{${digits}}`)
  .join("|");

/**
 * One requirement: a project (PEP 508 name, optional extras), `==` or `===` one exact version, then zero or more
 * `--hash=<algorithm>:<lowercase hex digest>` options, each after whitespace.
 */
export const PIP_REQUIREMENT = new RegExp(
  "^[A-Za-z0-9][A-Za-z0-9._-]*(\\[[A-Za-z0-9,._-]+\\])?\\s*===?\\s*[0-9][0-9A-Za-z.+!_-]*" +
    `(\\s+--hash=(${HASH_OPTION}))*$`,
);

/** The rule a requirement breaks, in the words of the error. */
export const PIP_REQUIREMENT_RULE =
  "must pin one exact version, such as torch==2.13.0, optionally followed by --hash=sha256:<64 lowercase hex " +
  "digits> (or sha384, sha512) options: pip resolves a range or a wildcard (>=, >, ~=, ==*) to whatever is newest " +
  "at each job start, so two runs of one plan could install different packages";

/** The exact version a requirement pins (`5.18.0` of `transformers==5.18.0 --hash=...`). */
export const pipVersion = (requirement: string): string => /===?\s*([^\s]+)/.exec(requirement)?.[1] ?? "";

/** Whether `version` (`4.48.3`, `0.6.3.post1`) is older than `major.minor`. */
export function versionBelow(version: string, floor: { readonly major: number; readonly minor: number }): boolean {
  const [major = 0, minor = 0] = version.split(".").map((n) => Number.parseInt(n, 10));
  return major < floor.major || (major === floor.major && minor < floor.minor);
}

/** Whether a requirement carries at least one hash. */
export const isHashed = (requirement: string): boolean => /\s--hash=/.test(requirement);

/** pip's options for a job's requirements (Ray's defaults, and `--require-hashes` when they are hashed). */
export function pipInstallOptions(hashed: boolean): string[] {
  return ["--disable-pip-version-check", "--no-cache-dir", ...(hashed ? ["--require-hashes"] : [])];
}

/** How a job's requirements install: none, every one hash-checked, or unverified. */
export type PipVerification = "none" | "hash-checked" | "unverified";

/** Whether `requirements` install hash-checked (all hashed), unverified (none hashed), or not at all. */
export function pipVerification(requirements: readonly string[] | undefined): PipVerification {
  if (!requirements || requirements.length === 0) return "none";
  return requirements.every(isHashed) ? "hash-checked" : "unverified";
}

/** A problem with one requirement, at its index in `runtimeEnv.pip`. */
export interface PipIssue {
  readonly index: number;
  readonly message: string;
}

const HOW_TO_HASH =
  "add --hash=sha256:<digest> (`pip hash` on the wheel, or `pip-compile --generate-hashes` with every dependency " +
  "the image lacks), or bake the package into the image and drop it here";

/**
 * In a list where some requirements carry hashes, each one without: pip checks hashes for all or none. Every
 * environment.
 */
export function mixedHashIssues(requirements: readonly string[] | undefined): PipIssue[] {
  const list = requirements ?? [];
  if (!list.some(isHashed)) return [];
  const message =
    "has no --hash while others do: pip checks hashes for all requirements or none, and would refuse the " +
    `job's install at its start; ${HOW_TO_HASH}`;
  return list.flatMap((r, index) => (isHashed(r) ? [] : [{ index, message }]));
}

/**
 * In an environment that installs nothing unverified (its profile's `unverifiedPip` false), each requirement of a list
 * without hashes (a list with some is {@link mixedHashIssues}'s).
 */
export function unverifiedPipIssues(requirements: readonly string[] | undefined, environment: Environment): PipIssue[] {
  const list = requirements ?? [];
  if (ENVIRONMENT_PROFILES[environment].unverifiedPip || list.some(isHashed)) return [];
  const message = `has no --hash: a ${environment} job installs nothing unverified at its start; ${HOW_TO_HASH}`;
  return list.map((_, index) => ({ index, message }));
}
