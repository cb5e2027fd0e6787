"""The end-to-end checks' record of failures, shared by run_jobs.py and its experiments."""

from __future__ import annotations


class Failures(list[str]):
    """Every failed check's message, printed as it happens."""

    def check(self, ok: bool, message: str) -> bool:
        if not ok:
            self.append(message)
            print(f"  FAIL {message}", flush=True)
        return ok
