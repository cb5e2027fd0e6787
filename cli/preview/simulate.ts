/**
 * The deploy simulation in a team's own unit tests: `simulateDeploy(() => import("./index"))` sets Pulumi's mocks (the
 * ones `ray-gpu preview` uses, which record each resource's parent and dependencies), runs the program, and checks
 * what it registered with `checkProgram`. Needs `@pulumi/pulumi`, the one this package resolves (its peer, the
 * project's own).
 */
import type { DeployProblem } from "../../core/deploy/program";
import { checkProgram } from "../../core/deploy/program";
import { installPreviewMocks, settlePreview } from "./mocks";
import { byCodePoint } from "../../core/serialize";
import { toPreview, type PreviewResource } from "./run";

/** Options of {@link simulateDeploy}. */
export interface SimulateDeployOptions {
  /**
   * The stack's config as `pulumi up` hands it over: `"<namespace>:<key>"` to the value, structured values as JSON text.
   * @default {}
   */
  readonly config?: Readonly<Record<string, string>>;
  /** The stack name the program sees (`pulumi.getStack()`). @default "test" */
  readonly stack?: string;
  /** The project name the program sees (`pulumi.getProject()`). @default "project" */
  readonly project?: string;
}

/** What a simulated deploy found. */
export interface SimulatedDeploy {
  /** Every resource the program registered, sorted by type then name, as `ray-gpu preview --json` lists them. */
  readonly resources: readonly PreviewResource[];
  /** Every create that cannot finish, name over its limit and Ray pod no node group takes; empty when sound. */
  readonly problems: readonly DeployProblem[];
}

/**
 * Runs `program` (your stack's code: `() => import("./index")`, or a function that creates resources) under Pulumi's
 * mocks and returns its resources and the deploy simulation's problems. The mocks stay set afterwards (they are
 * process-wide): run one program per test file.
 */
export async function simulateDeploy(
  program: () => unknown,
  options: SimulateDeployOptions = {},
): Promise<SimulatedDeploy> {
  const recorded = await installPreviewMocks(
    { ...options.config },
    options.stack ?? "test",
    undefined,
    options.project ?? "project",
  );
  await program();
  await settlePreview();
  const resources = recorded.map(toPreview).sort((a, b) => byCodePoint(a.type, b.type) || byCodePoint(a.name, b.name));
  return { resources, problems: checkProgram(resources) };
}
