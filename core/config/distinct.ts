/**
 * Lists whose entries must differ. A repeat validates as a list but cannot deploy or means nothing: the same IAM role
 * as two EKS access entries (the second create fails), one zone twice where EKS needs two zones, a pip requirement
 * twice (pip refuses "Double requirement given"). Each repeat is refused at its own index, naming the first.
 */

/** The part of a schema's refinement context this needs (zod's `RefinementCtx`; no zod type in our declarations). */
interface IssueSink {
  addIssue(issue: { code: "custom"; path: PropertyKey[]; message: string }): void;
}

/**
 * A `superRefine` for a list: every entry whose `key` repeats an earlier one is an issue, with `reason`.
 * @internal
 */
export function distinctEntries<T>(reason: string, key: (entry: T) => string = String) {
  return (list: readonly T[], ctx: IssueSink): void => {
    const first = new Map<string, number>();
    list.forEach((entry, i) => {
      const k = key(entry);
      const at = first.get(k);
      if (at === undefined) first.set(k, i);
      else ctx.addIssue({ code: "custom", path: [i], message: `repeats entry [${at}]; ${reason}` });
    });
  };
}

/**
 * A pip requirement's project, normalised as PEP 503 compares names (`Torch_Vision` is `torch-vision`).
 * @internal
 */
export const pipProject = (requirement: string): string =>
  (/^[A-Za-z0-9][A-Za-z0-9._-]*/.exec(requirement)?.[0] ?? requirement).toLowerCase().replace(/[-_.]+/g, "-");
