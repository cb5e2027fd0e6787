"""Local end-to-end run of the rendered dev RayJobs (``npm run test:ray``): the tests of this folder, under pytest.

For each rendered RayJob: start an isolated local Ray cluster from its rayStartParams and container environment
(scaled down where a 2-CPU machine without GPUs needs it; every change is printed), run its entrypoint with
``--smoke`` as Ray's job supervisor would, and check that the job succeeds, that it handed every planned value to
Ray, that training workers ran with the planned world size, micro-batch and accumulation (as PyTorch counted their
forwards and optimizer steps), and that nothing spilled (``test_job_runs.py``). Then the training job's rank-0
worker kills itself once Ray Train has registered a given checkpoint (the runtime's interruption hook,
``ray_gpu.interruptions``) and the run must resume from exactly that checkpoint, with every worker's data continuing
at the row after the last one it trained on, and finish (``test_resume.py``); and an embedding job's rerun is killed
while exactly a given number of its parts are written and must leave the previous committed output intact
(``test_committed_outputs.py``). ``--checks`` picks among the three. Every check reads what Ray, PyTorch or the job
decided (counts, steps, bytes, files), never a duration. What each value does to Ray is checked lever by lever
(``levers.py``). Exit code 0 only when every check passes.

    python runtime/e2e/run_jobs.py --rendered DIR --work DIR [--checks jobs,outputs,resume] [--only NAMES] [--timeout S] [pytest arguments]

is ``python -m pytest runtime/e2e`` with the same options (``--timeout`` is ``--job-timeout`` there; ``conftest.py``).
"""

from __future__ import annotations

import argparse
import os
import sys

import pytest


def pytest_arguments(argv: list[str] | None = None) -> list[str]:
    """This script's arguments as pytest's, on this folder; arguments it does not know go to pytest as they are."""
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0], epilog="Other arguments go to pytest (e.g. -k resume, -x)."
    )
    parser.add_argument("--rendered", required=True, help="output of ray-gpu render --stack dev")
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--timeout", default=None, help="a hang guard per job run, in seconds")
    parser.add_argument("--only", default=None, help="comma-separated RayJob names")
    parser.add_argument("--checks", default=None, help="comma-separated, of jobs, outputs, resume (default: all)")
    args, rest = parser.parse_known_args(argv)
    chosen = {
        "--rendered": args.rendered,
        "--work": args.work,
        "--job-timeout": args.timeout,
        "--only": args.only,
        "--checks": args.checks,
    }
    options = [part for name, value in chosen.items() if value is not None for part in (name, value)]
    # -s: the runs' progress as it happens (a run takes minutes); no cache folder in the checkout.
    return [
        os.path.dirname(os.path.abspath(__file__)),
        "-p",
        "no:cacheprovider",
        "-s",
        "-W",
        "ignore::DeprecationWarning",
        *options,
        *rest,
    ]


if __name__ == "__main__":
    sys.exit(int(pytest.main(pytest_arguments())))
