/**
 * Outputs a provider fills in, read so that nothing fails when one is missing: under the mocks Pulumi's testing guide
 * teaches (`newResource` returns the inputs as the state), an output the provider computes (a VPC's subnets, a
 * cluster's certificate authorities) is undefined, and the programs that import us must still run there.
 */
import * as pulumi from "@pulumi/pulumi";

/** The list `value` holds, or an empty one where a mock or an adopted resource leaves it out. */
export function listOf<T>(value: pulumi.Input<readonly T[] | undefined>): pulumi.Output<T[]> {
  return pulumi.output(value).apply((v) => [...((v ?? []) as T[])]);
}

/** The first item of a list output, or `fallback` when the list is empty or missing. */
export function firstOf<T>(value: pulumi.Input<readonly T[] | undefined>, fallback: T): pulumi.Output<T> {
  return listOf(value).apply((v) => v[0] ?? fallback);
}
