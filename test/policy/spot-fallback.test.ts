/**
 * The policy pack on a prod stack whose training pool runs spot-with-fallback: every resource the program registers
 * (both node groups and their launch templates, the autoscaler's release, the RayJobs, …) passes every rule. No rule of
 * the pack reads a node group's capacity type: spot is refused in prod by the config rules (`core/config/capacity.ts`),
 * before any resource exists, and spot-with-fallback is allowed there.
 */
import { describe, expect, it } from "vitest";
import { allViolations, RULES } from "../../policy/rules";
import { runProgram } from "../components/run-program";
import { fallbackConfigEdit } from "../helpers/spot-fallback";
import { stackInputs } from "./cases/fixtures";

describe("policy pack on a prod stack with a spot-with-fallback pool", () => {
  it("passes every resource of the program, the stack rule included", async () => {
    const recorded = await runProgram("prod", fallbackConfigEdit);
    const resources = stackInputs(recorded);
    const spotGroup = resources.find((r) => r.name === "ray-gpu-train-a10g-4x-spot-ng")!;
    expect(spotGroup.props["capacityType"]).toBe("SPOT");
    // The rules that see the spot group's own resources (its launch template) do run on them.
    const templates = resources.filter((r) => r.type === "aws:ec2/launchTemplate:LaunchTemplate");
    expect(templates.map((t) => t.name)).toContain("ray-gpu-train-a10g-4x-spot-lt");
    expect(RULES.some((rule) => rule.types.includes("aws:ec2/launchTemplate:LaunchTemplate"))).toBe(true);
    expect(RULES.some((rule) => rule.types.includes("aws:eks/nodeGroup:NodeGroup"))).toBe(false);
    expect(allViolations(resources)).toEqual([]);
  });
});
