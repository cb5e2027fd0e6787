/**
 * Prints one closing line, `N passed, N failed, N skipped`, after vitest's own summary, so CI and people read
 * the result the same way. Listed after "default" so it prints last.
 */
import type { Reporter } from "vitest/reporters";

interface Task {
  type: string;
  mode?: string;
  result?: { state?: string };
  tasks?: Task[];
}

export default class SummaryReporter implements Reporter {
  onFinished(files: readonly Task[] = [], errors: readonly unknown[] = []): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    const walk = (t: Task): void => {
      if (t.type === "test") {
        if (t.mode === "skip" || t.mode === "todo") count.skipped++;
        else if (t.result?.state === "pass") count.passed++;
        else count.failed++;
      }
      t.tasks?.forEach(walk);
    };
    for (const f of files) {
      // A file that failed to load has no tests but still failed.
      if (f.result?.state === "fail" && !(f.tasks?.length ?? 0)) count.failed++;
      walk(f);
    }
    count.failed += errors.length;
    process.stdout.write(`\n${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
