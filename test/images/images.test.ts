/**
 * The prod example jobs' images (images/<name>/): built from the Ray image the RayJobs declare, installing their hashed
 * lock with --require-hashes, holding every package the dev examples install at start (the train image also the EFA
 * software, signature-checked); and every prod example names one of them, so no prod job installs at start.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pipProject } from "../../core/config/distinct";
import { pipVerification } from "../../core/config/pip";
import { RAY_IMAGE } from "../../core/ray";
import { repoRoot, repoStack } from "../helpers/fixtures";

const IMAGES = join(repoRoot, "images");
const names = readdirSync(IMAGES);
const read = (name: string, file: string) => readFileSync(join(IMAGES, name, file), "utf8");
const pins = (name: string) =>
  read(name, "requirements.in")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"));

/** The train image's EFA layer: the installer's version, its install, where NCCL finds the plugin. */
const EFA_STEPS = ["ARG", "RUN", "ENV"];

describe("prod job images", () => {
  it("build from the RayJobs' Ray image and install only hash-checked packages", () => {
    expect(names.sort()).toEqual(["train", "vllm"]);
    for (const name of names) {
      const instructions = read(name, "Dockerfile")
        .split("\n")
        .filter((l) => /^[A-Z]+ /.test(l));
      expect(instructions.slice(0, 3), name).toEqual([
        `FROM ${RAY_IMAGE}`,
        "COPY requirements.txt /tmp/requirements.txt",
        "RUN pip install --no-cache-dir --require-hashes --requirement /tmp/requirements.txt && rm /tmp/requirements.txt",
      ]);
      expect(
        instructions.slice(3).map((i) => i.split(" ")[0]),
        name,
      ).toEqual(name === "train" ? EFA_STEPS : []);
      expect(
        pins(name).every((p) => /^[A-Za-z0-9._-]+==\S+$/.test(p)),
        name,
      ).toBe(true);
    }
  });

  it("install the EFA software in the train image only once its signature checks, as a container must", () => {
    const docker = read("train", "Dockerfile");
    const run = docker.slice(docker.indexOf("RUN cd /tmp"), docker.indexOf("ENV LD_LIBRARY_PATH"));
    const order = ["wget", "gpg --import", "gpg --verify", "tar -xf", "efa_installer.sh"].map((s) => run.indexOf(s));
    expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    expect(run).toContain("efa_installer.sh -y --skip-kmod --skip-limit-conf --no-verify");
    expect(docker).toMatch(/^ENV LD_LIBRARY_PATH=\/opt\/amazon\/ofi-nccl\/lib\/x86_64-linux-gnu:/m);
  });

  it("hold what the dev examples install at start, and are what every prod example runs", () => {
    const held = new Set(names.flatMap((n) => pins(n)));
    for (const w of repoStack("dev").workloads)
      for (const p of w.runtimeEnv?.pip ?? []) expect(held.has(p), `${w.name}: ${p}`).toBe(true);
    for (const w of repoStack("prod").workloads) {
      expect(pipVerification(w.runtimeEnv?.pip), w.name).toBe("none");
      const image = /\/ray-gpu\/([a-z]+):/.exec(w.image ?? "")?.[1];
      expect(names, `${w.name}: ${w.image}`).toContain(image);
      const devTwin = repoStack("dev").workloads.find((d) => d.name === w.name);
      for (const p of devTwin?.runtimeEnv?.pip ?? []) expect(pins(image!).map(pipProject)).toContain(pipProject(p));
    }
  });
});
