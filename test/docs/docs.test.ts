/**
 * The docs stay true: links resolve, every config key is documented (and nothing else), the JSON and cost figures shown
 * match what the tool prints, and user pages describe the product, not the machines it was developed on. The shell
 * blocks marked `runnable` are run by runnable.test.ts.
 */
import { existsSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { StackConfigSchema } from "../../core/config/stack";
import { schemaKeyPaths } from "../../core/config/zod-issues";
import { planPools } from "../../core/pools";
import { planStack } from "../../workloads/stack";
import { planDocument } from "../../cli/plan/document";
import { repoRoot, repoStack, runtime } from "../helpers/fixtures";
import { anchors, codeBlocks, pages, readPage, relativeLinks, tableRows } from "./markdown";

describe("docs", () => {
  it("links every docs page from the README, and every relative link resolves (anchors included)", () => {
    const readme = relativeLinks("README.md");
    for (const page of pages().filter((p) => p.startsWith("docs/") && p !== "docs/README.md"))
      expect(readme, page).toContain(page);
    for (const page of pages()) {
      for (const link of relativeLinks(page)) {
        const [file, anchor] = link.split("#") as [string, string | undefined];
        const target = file === "" ? page : normalize(join(dirname(page), file));
        expect(existsSync(join(repoRoot, target)), `${page} links ${link}`).toBe(true);
        if (anchor && target.endsWith(".md")) expect([...anchors(target)], `${page} links ${link}`).toContain(anchor);
      }
    }
  });

  it("documents every key of the config schema in the configuration reference, and no key the schema lacks", () => {
    const documented = new Set(
      tableRows(readPage("docs/configuration.md"))
        .map((row) => /^`ray-gpu:([^`]+)`$/.exec(row[0] ?? "")?.[1])
        .filter((k): k is string => k !== undefined),
    );
    const schema = schemaKeyPaths(StackConfigSchema);
    expect(
      [...schema].filter((k) => !documented.has(k)),
      "undocumented keys",
    ).toEqual([]);
    expect(
      [...documented].filter((k) => !schema.has(k)),
      "documented keys the schema does not have",
    ).toEqual([]);
  });

  it("shows an excerpt of plan --json whose every key and value exists in the real document", () => {
    const block = codeBlocks("docs/cli.md").find((b) => b.info[0] === "json" && b.body.includes('"workloads"'))!;
    const excerpt = JSON.parse(block.body) as Record<string, unknown>;
    const real = JSON.parse(JSON.stringify(planDocument("dev", planStack(repoStack("dev"), { runtime })))) as Record<
      string,
      unknown
    >;
    expectExcerptOf(excerpt, real, "plan");
  });

  it("quotes each example pool's hourly cost at max as the plan computes it", () => {
    const rows = tableRows(readPage("docs/deploy.md")).filter((r) => /^(dev|prod) `/.test(r[0] ?? ""));
    // every pool of both stacks, the CPU pool included
    const pools = (["dev", "prod"] as const).map((s) => repoStack(s).platform.gpuNodeGroups.length + 1);
    expect(rows.length).toBe(pools[0]! + pools[1]!);
    for (const [stackPool, instance, , perNode, atMax] of rows) {
      const [stack, pool] = stackPool!.split(" ") as ["dev" | "prod", string];
      const plan = planPools(repoStack(stack).platform);
      const p = [plan.cpu, ...plan.gpu].find((x) => `\`${x.name}\`` === pool)!;
      expect(instance!.startsWith(p.instanceType), stackPool).toBe(true);
      expect(Number(atMax), stackPool).toBe(Math.round(p.usdPerHourAtMax * 100) / 100);
      expect(Number(perNode) * p.maxNodes, stackPool).toBeCloseTo(p.usdPerHourAtMax, 3);
    }
  });

  it("says why the dev stack's example jobs queue, with the numbers its plan computes", () => {
    const text = readPage("docs/reliability.md");
    const sentence = [
      /its quota is ([\d.]+) CPUs \(what (\d+) `([\w.]+)` nodes\s+at most have left for Ray pods once CoreDNS, /,
      /the operators and Prometheus have theirs\), each job's head and submitter\s+ask ([\d.]+), so (\d+) of its /,
      /(\d+) example jobs run at once and the other (\d+) wait for pool `(\w+)`/,
    ];
    const said = new RegExp(sentence.map((r) => r.source).join("")).exec(text);
    expect(said, "the dev queue paragraph").not.toBeNull();
    const [, quota, nodes, instance, ask, atOnce, jobs, waiting, pool] = said!;
    const config = repoStack("dev");
    const plan = planStack(config, { runtime });
    const system = plan.queue!.admission.pools.find((p) => p.pool === plan.pools.cpu.name)!;
    expect(Number(quota)).toBe(system.quotaCpus);
    expect([Number(nodes), instance]).toEqual([plan.pools.cpu.maxNodes, plan.pools.cpu.instanceType]);
    // Less than the nodes leave after the kubelet's reserve and the DaemonSets: the platform's pods take the rest.
    const { allocatable, daemonSetReserve } = plan.pools.cpu;
    expect(Number(quota) * 1000).toBeLessThan(
      (allocatable.cpuMillis - daemonSetReserve.cpuMillis) * plan.pools.cpu.maxNodes,
    );
    expect(new Set(plan.queue!.demands.map((d) => d.headCpus))).toEqual(new Set([Number(ask)]));
    expect(Number(atOnce)).toBe(plan.queue!.admission.admitted.length);
    expect(Number(jobs)).toBe(config.workloads.length);
    expect(plan.queue!.admission.queued.map((q) => q.waitsFor)).toEqual(Array(Number(waiting)).fill(pool));
  });

  it("shows no placeholder: every page's text is written, and every section the bench fills holds its table", () => {
    // A positive grammar for a measured section: the bench's "Measured <date> ..." line first, then at least a table.
    const section = /<!-- bench:ray (\w+) -->\n([\s\S]*?)<!-- \/bench:ray \1 -->/g;
    const measured = /^\nMeasured \d{4}-\d{2}-\d{2} [^\n]+\n[\s\S]*^\|( ?-+ ?\|)+$[\s\S]*\n\n$/m;
    const placeholder = /^\s*[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\s*$|\b(TODO|TBD|FIXME|XXX)\b/;
    const filled: string[] = [];
    for (const page of pages()) {
      const text = readPage(page);
      const hits = text
        .split("\n")
        .map((line, i) => `${page}:${i + 1}: ${line}`)
        .filter((l) => placeholder.test(l.slice(l.indexOf(": ") + 2)));
      expect(hits, page).toEqual([]);
      for (const [, part, body] of text.matchAll(section)) {
        expect(body, `${page}: the bench:ray ${part} section`).toMatch(measured);
        filled.push(`${page} ${part}`);
      }
    }
    expect(filled.sort()).toEqual([
      "docs/runtime-levers.md embed",
      "docs/runtime-levers.md levers",
      "docs/tune.md tune",
    ]);
  });

  it("keeps notes about the development machine out of user pages (benchmarks name theirs, in the README only)", () => {
    const banned =
      /offline index|local index|this machine|2[- ]cores?\b|2-CPU machine|no GPU (here|was available)|sandbox/i;
    const bannedPaths = /the shared folder|\.\.\/shared\//i;
    const benchmarks = /\n## Performance\n[\s\S]*?(?=\n## )/;
    for (const page of pages()) {
      const text =
        page === "README.md" ? readPage(page).replace(benchmarks, (m) => m.replace(/[^\n]/g, "")) : readPage(page);
      const hits = text
        .split("\n")
        .map((line, i) => ({ line: i + 1, text: line }))
        .filter((l) => banned.test(l.text) || bannedPaths.test(l.text));
      expect(hits, page).toEqual([]);
    }
  });
});

/** Every key of `excerpt` exists in `real`, objects recursively; arrays match their elements by `name` or `key`, else by position. */
function expectExcerptOf(excerpt: unknown, real: unknown, path: string): void {
  if (Array.isArray(excerpt)) {
    expect(Array.isArray(real), path).toBe(true);
    excerpt.forEach((item, i) => {
      const id =
        item && typeof item === "object"
          ? ((item as Record<string, unknown>)["name"] ?? (item as Record<string, unknown>)["key"])
          : undefined;
      const match =
        id === undefined
          ? (real as unknown[])[i]
          : (real as Record<string, unknown>[]).find((r) => r["name"] === id || r["key"] === id);
      expect(match, `${path}[${String(id ?? i)}]`).toBeDefined();
      expectExcerptOf(item, match, `${path}[${String(id ?? i)}]`);
    });
    return;
  }
  if (excerpt && typeof excerpt === "object") {
    expect(real && typeof real === "object", path).toBe(true);
    for (const [k, v] of Object.entries(excerpt)) {
      expect(Object.keys(real as object), `${path}.${k}`).toContain(k);
      expectExcerptOf(v, (real as Record<string, unknown>)[k], `${path}.${k}`);
    }
    return;
  }
  expect(real, path).toEqual(excerpt);
}
