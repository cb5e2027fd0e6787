/**
 * Pulumi's mock runtime as a test seam. The mocks themselves are the ones `ray-gpu preview` uses
 * (cli/preview/mocks.ts): every registered resource is recorded with its parent, inputs and dependencies, and
 * cloud-only outputs come back as placeholders. Import the program under test with `await import(...)` after
 * {@link setupPulumiMocks}.
 */
import type * as pulumi from "@pulumi/pulumi";
import { installPreviewMocks, settlePreview, type RecordedResource } from "../../cli/preview/mocks";
import { pulumiConfigMap } from "../../cli/input/stack-file";

export type { RecordedResource };
export { settlePreview };

/** `config:` of a stack file, as Pulumi's runtime sees it. */
export const stackFileConfig = pulumiConfigMap;

/** Installs the mocks and the config; returns the list that fills as resources register. */
export function setupPulumiMocks(config: Record<string, string>, stack = "dev"): Promise<RecordedResource[]> {
  return installPreviewMocks(config, stack);
}

/** The value of an Output, for assertions. */
export function promiseOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}
