/** Resources of a deploy graph for the simulation's tests, as `ray-gpu preview` records them. */
import type { DeployNode } from "../../core/deploy/order";

/** A resource of `type` named `name`: no parent, no dependencies, no inputs unless `extra` gives them. */
export const deployNode = (type: string, name: string, extra: Partial<DeployNode> = {}): DeployNode => ({
  type,
  name,
  parent: null,
  dependsOn: [],
  inputs: {},
  ...extra,
});
