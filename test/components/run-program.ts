/** Runs stacks/index.ts once under the preview mocks with a stack's config (one program per test file). */
import { join } from "node:path";
import { repoRoot } from "../helpers/fixtures";
import { settlePreview, setupPulumiMocks, stackFileConfig, type RecordedResource } from "../helpers/pulumi-mocks";

export async function runProgram(stack: "dev" | "prod", edit: (config: Record<string, string>) => void = () => {}): Promise<RecordedResource[]> {
  const config = stackFileConfig(join(repoRoot, `Pulumi.${stack}.yaml`));
  edit(config);
  const recorded = await setupPulumiMocks(config, stack);
  await import("../../stacks/index.js");
  await settlePreview();
  return recorded;
}

export const ofType = (rs: readonly RecordedResource[], type: string) => rs.filter((r) => r.type === type);
