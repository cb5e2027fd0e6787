/** The report's views: spilled bytes in GiB, and the cost said to be an upper bound where the pool runs on spot. */
import { describe, expect, it } from "vitest";
import { printable, printableJson } from "../../../cli/output/terminal-text";
import { jobReport, type Promised } from "../../../cli/report/job-report";
import type { Measured } from "../../../cli/report/prometheus";
import { reportText } from "../../../cli/report/text";
import { GIB } from "../../helpers/report-fixtures";

const promised: Promised = {
  workload: "llm-pretrain",
  kind: "TrainingJob",
  namespace: "ray-jobs",
  gpuUtilizationTargetPercent: 90,
  requiredGiB: 17.591,
  usableGiB: 21.99,
  gpus: 32,
  workers: 8,
  usdPerNodeHour: 5.672,
  capacityType: "on-demand",
  instanceTypes: ["g5.12xlarge"],
  forecast: null,
};
const measured: Measured = {
  perWorker: [{ pod: "w-0", averagePercent: 95, p10Percent: 90 }],
  averagePercent: 95,
  p10Percent: 90,
  peakMemoryMiB: 17300,
  spilledBytes: 1.5 * GIB,
  rowsPerSecond: {},
  gpuHours: 32,
  nodeHours: 8,
  dataWaitFraction: undefined,
  samplesPerSecond: undefined,
  tokensPerSecond: undefined,
};
const reportOf = (p: Promised) =>
  jobReport(p, measured, { fromSeconds: 0, toSeconds: 3600 }, { stepSeconds: 60, perWorker: [] });

describe("report text", () => {
  it("shows bytes spilled in GiB with two decimals", () => {
    expect(reportText(reportOf(promised))).toMatch(/\n {2}bytes spilled {2,}1\.50 GiB {2,}0 GiB\n/);
  });

  it.each([
    ["on-demand", "cost (GPU nodes, on demand)", false],
    ["spot", "cost (GPU nodes, spot: at the on-demand price, an upper bound)", true],
    ["spot-with-fallback", "cost (GPU nodes, spot with fallback: at the on-demand price, an upper bound)", true],
  ] as const)(
    "prices a %s pool at the catalog's on-demand price and says what that is",
    (capacityType, label, bound) => {
      const r = reportOf({ ...promised, capacityType });
      expect(r.usage).toMatchObject({ usd: 45.38, capacityType, usdIsUpperBound: bound });
      expect(reportText(r)).toMatch(
        new RegExp(`\\n  ${label.replace(/[()]/g, "\\$&")} +\\$45\\.38 +\\$5\\.672/node-hour\\n`),
      );
    },
  );

  it("says a pool with fallback sizes is priced at the dearest, an upper bound", () => {
    const r = reportOf({ ...promised, instanceTypes: ["g5.12xlarge", "g6e.12xlarge"] });
    expect(r.usage).toMatchObject({ usdIsUpperBound: true, pricedAtDearestOf: ["g5.12xlarge", "g6e.12xlarge"] });
    expect(reportText(r)).toMatch(
      /cost \(GPU nodes, on demand; at the dearest of g5\.12xlarge, g6e\.12xlarge, an upper bound\)/,
    );
    expect(reportOf(promised).usage).not.toHaveProperty("pricedAtDearestOf");
  });

  it("sets the forecast beside the measured run, and says where there is none", () => {
    const forecast = {
      work: { unit: "optimizer steps" as const, count: 1000, from: "steps: 1000" },
      wallSeconds: 3000,
      startupSeconds: 60,
      gpuHours: 26.667,
      costUsd: 37.81,
      costIsUpperBound: false,
      gpuUtilization: 0.9,
      bound: "gpu-compute" as const,
      unitSeconds: 2.94,
      waitShare: 0,
    };
    const r = reportOf({ ...promised, forecast });
    // the hour took 1.2 times the 50 minutes forecast; 8 node-hours at $5.672 against $37.81
    expect(r.forecast).toEqual({
      forecast: { wallSeconds: 3000, gpuHours: 26.667, costUsd: 37.81, gpuUtilizationPercent: 90 },
      measured: { wallSeconds: 3600, gpuHours: 32, costUsd: 45.38, gpuUtilizationPercent: 95 },
      wallRatio: 1.2,
      costRatio: 1.2,
    });
    const text = reportText(r);
    expect(text).toMatch(/\n {2}time per run +1 h 00 min +50 min forecast, measured 1\.20x\n/);
    expect(text).toMatch(/\n {2}cost per run +\$45\.38 +\$37\.81 forecast, measured 1\.20x\n/);
    expect(reportOf(promised).forecast).toBeNull();
    expect(reportText(reportOf(promised))).toMatch(/\n {2}forecast +- +none \(the spec says too little/);
  });
});

describe("text from a server, made printable", () => {
  it("shows C0, DEL, C1 and bidirectional controls as escapes and leaves the rest alone", () => {
    expect(printable("pod-1\u001b[31m\r\n\t\u007f\u0085\u009b\u202e\u2066é✓")).toBe(
      "pod-1\\x1b[31m\\x0d\\x0a\\x09\\x7f\\x85\\x9b\\u202e\\u2066é✓",
    );
  });

  it("escapes in JSON text what JSON.stringify leaves raw, keeping its lines and its meaning", () => {
    const value = { pod: "a\u001b\u009b\u202eb", n: [1] };
    const json = printableJson(JSON.stringify(value, null, 2));
    expect(json).not.toMatch(/[\u007f-\u009f\u202e]/);
    expect(json.split("\n")).toHaveLength(6);
    expect(JSON.parse(json)).toEqual(value);
  });
});
