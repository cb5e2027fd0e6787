/**
 * Every string and number of the stack config has a grammar (a pattern, a format, a range, a refinement) or is marked
 * free text with the reason; the walk itself is checked on small schemas with each kind of wrapper.
 */
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { StackConfigSchema } from "../../../core/config/stack";
import { grammarGaps, schemaLeaves } from "../../../core/config/grammar-audit";
import { freeText } from "../../../core/config/free-text";

describe("stack config grammar", () => {
  it("gives every string and number a grammar, or marks it free text with the reason", () => {
    expect(grammarGaps(StackConfigSchema, "ray-gpu:")).toEqual([]);
  });

  it("marks as free text only these fields, each with a reason", () => {
    const free = schemaLeaves(StackConfigSchema, "ray-gpu:").filter((l) => l.grammar === "free text");
    expect(free.map((l) => `${l.path} (${l.type})`)).toEqual([
      "ray-gpu:workloads[].entrypoint (string)",
      "ray-gpu:workloads[].env.* (string)",
      "ray-gpu:workloads[].runtimeEnv.envVars.* (string)",
      "ray-gpu:workloads[].sweep.*[] (number)",
      "ray-gpu:workloads[].sweep.*[] (string)",
    ]);
    for (const l of free) expect(l.reason!.length, l.path).toBeGreaterThan(40);
  });

  it("walks the whole stack config: the platform and every workload kind", () => {
    const paths = schemaLeaves(StackConfigSchema, "ray-gpu:").map((l) => l.path);
    expect(paths.length).toBeGreaterThan(70);
    for (const p of [
      "ray-gpu:region",
      "ray-gpu:platform.cluster.adminRoleArns[]",
      "ray-gpu:platform.storage.prefix",
      "ray-gpu:workloads[].lora.targetModules[]",
      "ray-gpu:workloads[].secretEnv{key}",
      "ray-gpu:workloads[].secretEnv.*.key",
      "ray-gpu:workloads[].gpuMemoryUtilization",
      "ray-gpu:workloads[].model.hiddenSize",
    ])
      expect(paths, p).toContain(p);
  });
});

describe("grammarGaps", () => {
  type Tree = { a?: string; next?: Tree };
  const tree: z.ZodType<Tree> = z.lazy(() => z.object({ a: z.string().optional(), next: tree.optional() }));
  const schema = z.object({
    plain: z.string().optional(),
    lengthOnly: z.string().min(1),
    pattern: z.string().regex(/^a$/),
    refined: z.string().refine((s) => s !== ""),
    transformed: z.string().transform((s) => s.trim()),
    format: z.email(),
    number: z.array(z.number()).default([]),
    int: z.number().int(),
    ranged: z.number().min(0).max(1).nullable(),
    map: z.record(z.string(), z.string()),
    kinds: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("x"), x: z.number() }),
      z.object({ kind: z.literal("y"), y: z.enum(["a", "b"]) }),
    ]),
    pair: z.tuple([z.string(), z.boolean()]),
    tree,
    any: z.unknown(),
    free: freeText(z.string(), "a human description, shown and never parsed"),
    emptyReason: freeText(z.string(), " "),
  });

  // A recursive schema is walked once down each path: `tree.next` is `tree` again, reported at `tree.a`.
  it("lists each unrefined string and number through every wrapper, and each empty reason", () => {
    expect(grammarGaps(schema)).toEqual([
      "any (unknown): no grammar and no free-text mark",
      "emptyReason (string): marked free text with an empty reason",
      "kinds.x (number): no grammar and no free-text mark",
      "lengthOnly (string): no grammar and no free-text mark",
      "map.* (string): no grammar and no free-text mark",
      "map{key} (string): no grammar and no free-text mark",
      "number[] (number): no grammar and no free-text mark",
      "pair[0] (string): no grammar and no free-text mark",
      "plain (string): no grammar and no free-text mark",
      "tree.a (string): no grammar and no free-text mark",
    ]);
  });
});
