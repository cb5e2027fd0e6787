/**
 * The deploy simulation refuses a Ray pod whose service account its namespace will not have: in a namespace the
 * program creates, only the accounts it creates and `default` exist; elsewhere nothing is refused.
 */
import { describe, expect, it } from "vitest";
import { checkServiceAccounts } from "../../../core/deploy/service-accounts";
import { deployNode as node } from "../../helpers/deploy-graph";

const template = (serviceAccountName?: string) => ({ spec: serviceAccountName ? { serviceAccountName } : {} });
const rayJob = (namespace: string, account?: string, submitter?: string) =>
  node("kubernetes:ray.io/v1:RayJob", "job-rayjob", {
    inputs: {
      metadata: { name: "job", namespace },
      spec: {
        rayClusterSpec: {
          headGroupSpec: { template: template(account) },
          workerGroupSpecs: [{ groupName: "gpu", template: template(account) }],
        },
        ...(submitter ? { submitterPodTemplate: template(submitter) } : {}),
      },
    },
  });
const namespace = (name: string) =>
  node("kubernetes:core/v1:Namespace", `${name}-ns`, { inputs: { metadata: { name } } });
const account = (name: string, ns: string) =>
  node("kubernetes:core/v1:ServiceAccount", `${name}-sa`, { inputs: { metadata: { name, namespace: ns } } });

describe("Ray pods' service accounts", () => {
  it("passes accounts the program creates in the namespace, and default", () => {
    expect(checkServiceAccounts([namespace("ray"), account("job", "ray"), rayJob("ray", "job", "default")])).toEqual(
      [],
    );
    expect(checkServiceAccounts([namespace("ray"), rayJob("ray")])).toEqual([]);
  });

  it("names every pod template whose account the program does not create in its namespace", () => {
    const problems = checkServiceAccounts([
      namespace("ray"),
      account("job", "other"),
      account("ray-workloads", "ray"),
      rayJob("ray", "job", "submitter"),
    ]);
    expect(problems.map((p) => /^its (.*?) would run as service account "(.*?)"/.exec(p.message)?.slice(1))).toEqual([
      ["head pod", "job"],
      ["worker group gpu's pods", "job"],
      ["submitter pod", "submitter"],
    ]);
    expect(problems[0]!.resource).toBe("job-rayjob");
    expect(problems[0]!.message).toContain('(it has "default", "ray-workloads")');
    expect(problems[0]!.message).toMatch(/add the workload to the platform's ray-gpu:workloads/);
  });

  it("refuses nothing in a namespace the program does not create (its accounts are not in the graph)", () => {
    expect(checkServiceAccounts([rayJob("theirs", "their-account")])).toEqual([]);
  });
});
