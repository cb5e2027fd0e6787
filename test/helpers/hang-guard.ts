/**
 * How long a test, a hook or a child process may run before it counts as hung. A guard, never the check: every test
 * asserts what the code decided (counts, bytes, refusals, exit codes), and how fast anything runs is measured by the
 * benchmarks (`npm run bench`, `npm run bench:ray`). Generous on purpose: CI machines are shared and at times loaded
 * ten times over, when a child that takes 4 s on a quiet machine takes a minute; a real hang still ends here.
 */
export const HANG_GUARD_MS = 15 * 60_000;
