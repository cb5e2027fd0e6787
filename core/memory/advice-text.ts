/**
 * A plan's advice as one sentence. The planners list the finding first (what does not fit, and by how much), then
 * each way out as a whole clause that starts with its verb ("use gpus: 8 ...", "leave zeroStage to the planner ...");
 * this joins them once, so no clause carries its own "or" and none is cut.
 */

/** "finding; way out; or another; or a third". */
export function adviceText(advice: readonly string[]): string {
  const [finding, ...waysOut] = advice;
  return [finding, waysOut.join("; or ")].filter((part) => part !== undefined && part !== "").join("; ");
}
