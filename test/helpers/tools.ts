/**
 * Real tools the tests run (promtool, the Prometheus server, Chromium): found on the PATH or through an environment
 * variable. Where one is missing the tests that need it say skipped, with the reason; under CI (`CI=true`) a missing
 * tool fails instead, since `.ci/run` installs every tool its tests need.
 */
import { execFileSync } from "node:child_process";

/** The tool's path, or undefined. `envVar` (e.g. PROMTOOL) wins over the PATH. */
export function findTool(name: string, envVar: string): string | undefined {
  const given = process.env[envVar];
  if (given) return given;
  try {
    return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Why the tool's tests are skipped, or undefined when it is there; throws under CI when it is missing. */
export function missingReason(name: string, path: string | undefined, install: string): string | undefined {
  if (path) return undefined;
  const reason = `${name} is not installed (${install})`;
  if (process.env["CI"]) throw new Error(`${reason}: .ci/run must install it`);
  console.warn(`skipped: ${reason}`);
  return reason;
}

/** Debian's Chromium, headless, driven by playwright-core: a fresh profile, no network chatter (the machine is closed). */
export async function launchChromium(executablePath: string) {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Every `[data-key]` element of the page as `[key, text]`, and the console errors it logged while loading. */
export async function openPage(executablePath: string, file: string, screenshot?: string) {
  const browser = await launchChromium(executablePath);
  try {
    const page = await browser.newPage({ viewport: { width: 1150, height: 900 } });
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`file://${file}`);
    const shown = await page.$$eval("[data-key]", (els) =>
      els.map((e) => [e.getAttribute("data-key") ?? "", e.textContent ?? ""] as [string, string]),
    );
    const polylines = await page.$$eval("polyline.worker", (els) => els.length);
    const bars = await page.$$eval("rect.budget", (els) => els.length);
    if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
    return { shown, errors, polylines, bars };
  } finally {
    await browser.close();
  }
}
