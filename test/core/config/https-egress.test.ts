/**
 * `security.httpsEgressCidrs` holds ranges outside link-local: a bare `169.254.169.254/32` would be rendered as an
 * egress rule to the instance metadata service (a /32 cannot be cut from itself), which docs/security.md says pods
 * never reach. A wider range that holds it stays accepted: the NetworkPolicy cuts the address out of it.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../../core/config/stack";
import { configProblems, minimalConfig } from "../../helpers/fixtures";

function withEgress(cidrs: string[]) {
  const raw = minimalConfig();
  (raw.platform as Record<string, unknown>)["security"] = { httpsEgressCidrs: cidrs };
  return raw;
}

describe("security.httpsEgressCidrs", () => {
  it("refuses each range inside link-local 169.254.0.0/16, naming its index", () => {
    const text = configProblems(withEgress(["10.0.0.0/8", "169.254.169.254/32", "169.254.0.0/16", "169.254.170.0/24"]));
    for (const i of [1, 2, 3])
      expect(text).toContain(`security.httpsEgressCidrs[${i}]: is inside link-local 169.254.0.0/16`);
    expect(text).not.toContain("httpsEgressCidrs[0]");
  });

  it("accepts ranges that hold the metadata address among others (the policy cuts it out)", () => {
    const cidrs = ["0.0.0.0/0", "128.0.0.0/1", "169.0.0.0/8"];
    expect(parseStackConfig(withEgress(cidrs)).platform.security.httpsEgressCidrs).toEqual(cidrs);
  });
});
