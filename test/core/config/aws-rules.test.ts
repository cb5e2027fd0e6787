/** Names and addresses AWS or Kubernetes would refuse (or silently change) are refused before anything is created. */
import { describe, expect, it } from "vitest";
import * as awsEnums from "@pulumi/aws/types/enums";
import { AWS_REGIONS, SUPPORTED_REGIONS } from "../../../core/catalog/aws-regions";
import { EKS_VERSIONS, eksSupport, STANDARD_EKS_VERSIONS } from "../../../core/catalog/eks-versions";
import { DEFAULT_KUBERNETES_VERSION } from "../../../core/config/platform";
import { bucketNameProblems } from "../../../core/config/aws-rules";
import { configProblems, minimalConfig } from "../../helpers/fixtures";

const withPlatform = (edit: (p: Record<string, unknown>, c: ReturnType<typeof minimalConfig>) => void) => {
  const c = minimalConfig();
  edit(c.platform, c);
  return configProblems(c);
};

describe("AWS and Kubernetes rules", () => {
  it("the region table is @pulumi/aws's Region enum, exactly", () => {
    expect(Object.keys(AWS_REGIONS).sort()).toEqual(Object.values(awsEnums.Region).sort());
    expect(SUPPORTED_REGIONS).toContain("us-east-1");
    expect(SUPPORTED_REGIONS).not.toContain("us-gov-west-1");
  });

  it("refuses an unknown region and one of another partition, saying why", () => {
    expect(withPlatform((_, c) => (c.region = "xx-nowhere-9"))).toMatch(
      /ray-gpu:region: is not an AWS region; use one of .*us-east-1/,
    );
    expect(withPlatform((_, c) => (c.region = "us-gov-west-1"))).toMatch(/aws-us-gov partition; .*IAM ARNs/);
    expect(withPlatform((_, c) => (c.region = "us-east1"))).toMatch(
      /ray-gpu:region: is not an AWS region; did you mean "us-east-1"\? \(got "us-east1"\)/,
    );
  });

  it("accepts only Kubernetes versions in EKS standard support on the table's date, the default among them", () => {
    expect(STANDARD_EKS_VERSIONS).toContain(DEFAULT_KUBERNETES_VERSION);
    expect(eksSupport("1.99")).toBe("unknown");
    expect(eksSupport("1.31")).toBe("ended");
    expect(eksSupport("1.33")).toBe("extended");
    for (const v of Object.values(EKS_VERSIONS)) expect(v.released < v.endOfStandardSupport).toBe(true);
    const refuse = (v: string) => withPlatform((p) => (p.cluster = { ...(p.cluster as object), kubernetesVersion: v }));
    expect(refuse("1.99")).toMatch(
      /kubernetesVersion: is not a Kubernetes version EKS offers; use one of 1\.34, 1\.35, 1\.36/,
    );
    expect(refuse("1.33")).toMatch(/left EKS standard support on 2026-07-29/);
    expect(refuse("1.30")).toMatch(/no longer run by EKS/);
  });

  it("refuses CIDRs with octets over 255, bad prefixes or host bits, naming the network", () => {
    const cidrs = (list: string[]) =>
      withPlatform((p) => (p.cluster = { ...(p.cluster as object), publicAccessCidrs: list }));
    const msg = cidrs(["999.1.2.3/16", "10.0.0.1/16", "10.0.0.0/33", "01.2.3.4/8", "1.2.3.4/32/1"]);
    expect(msg).toMatch(/publicAccessCidrs\[0\]: must be an IPv4 CIDR with octets 0-255/);
    expect(msg).toMatch(/publicAccessCidrs\[1\]: has host bits set; the network is "10\.0\.0\.0\/16"/);
    expect(msg).toMatch(/publicAccessCidrs\[2\]/);
    expect(msg).toMatch(/publicAccessCidrs\[3\]/);
    expect(msg).toMatch(/publicAccessCidrs\[4\]/);
    expect(withPlatform((p) => (p.network = { cidrBlock: "10.0.0.0/8" }))).toMatch(
      /cidrBlock: must be an IPv4 CIDR from \/16 to \/24/,
    );
    expect(() => configProblems({ ...minimalConfig() })).toThrow(); // the fixture itself is valid
  });

  it("lists every S3 naming rule a bucket name breaks", () => {
    expect(bucketNameProblems("my-bucket.data")).toEqual([]);
    expect(bucketNameProblems("192.168.5.4")).toEqual(["must not be formatted as an IP address"]);
    expect(bucketNameProblems("Ab..-")).toEqual([
      "may hold only lowercase letters, digits, '.' and '-'",
      "must begin and end with a letter or digit",
      "must not hold two adjacent periods",
    ]);
    expect(bucketNameProblems("xn--a-s3alias")).toEqual(['must not start with "xn--"', 'must not end with "-s3alias"']);
    expect(bucketNameProblems("ab")).toEqual(["must be 3-63 characters long"]);
    expect(withPlatform((p) => (p.storage = { bucketName: "192.168.5.4" }))).toMatch(
      /storage\.bucketName: is not a valid S3 bucket name: must not be formatted as an IP address \(got "192\.168\.5\.4"\)/,
    );
  });

  it("refuses system namespaces for the jobs", () => {
    for (const ns of ["kube-system", "default", "kube-anything", "kuberay-system", "kueue-system", "monitoring"])
      expect(withPlatform((p) => (p.workloadNamespace = ns))).toMatch(
        /workloadNamespace: is a namespace the platform or Kubernetes uses/,
      );
  });

  it("reports NaN and Infinity as such, not as null", () => {
    const msg = withPlatform(
      (p) => (p.gpuNodeGroups = [{ name: "g", instanceType: "g5.xlarge", maxNodes: NaN, minNodes: Infinity }]),
    );
    expect(msg).toMatch(/maxNodes: NaN is not a number; give a finite number \(got NaN\)/);
    expect(msg).toMatch(/minNodes: Infinity is not allowed; give a finite number \(got Infinity\)/);
  });
});
