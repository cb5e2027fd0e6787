/**
 * The deploy simulation of a whole Pulumi program: the order `pulumi up` creates its resources in and whether each
 * create can finish (`./order.ts`), every name against its service's limit (`./names.ts`), and whether each Ray pod can
 * land on a node group of the program (`./placement.ts`) as a service account that exists (`./service-accounts.ts`).
 * Pure: it reads the resource graph a mock run records (type, name, parent, dependencies, inputs), whatever made it:
 * `ray-gpu preview --program`, the policy pack, or a team's own unit test through `simulateDeploy`.
 */
import { checkNames } from "./names";
import { checkDeployOrder, type DeployNode, type DeployProblem } from "./order";
import { checkPlacement } from "./placement";
import { checkServiceAccounts } from "./service-accounts";

export type { DeployNode, DeployProblem } from "./order";

/** One part of the simulation: what it checks and the sources of what it models. */
export interface ProgramCheck {
  readonly name: string;
  readonly check: (nodes: readonly DeployNode[]) => DeployProblem[];
}

/** The simulation's parts, in the order their problems are listed. */
export const PROGRAM_CHECKS: readonly ProgramCheck[] = [
  { name: "deploy order (WAIT_RULES)", check: checkDeployOrder },
  { name: "names within their limits (NAME_LIMITS)", check: checkNames },
  { name: "Ray pods land on a node group", check: checkPlacement },
  { name: "Ray pods run as service accounts that exist", check: checkServiceAccounts },
];

/**
 * Every problem the deploy simulation finds in a program's resources: a create that waits for ever or fails, a name
 * over its limit, a Ray pod no node group can take. Empty when the program deploys as written.
 */
export function checkProgram(nodes: readonly DeployNode[]): DeployProblem[] {
  return PROGRAM_CHECKS.flatMap((c) => c.check(nodes));
}
