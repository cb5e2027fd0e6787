"""The end-to-end tests of the rendered dev RayJobs on local Ray clusters (``npm run test:ray``; ``run_jobs.py``).

Options: ``--rendered DIR`` (the output of ``ray-gpu render --stack dev``; default: rendered here by the CLI, unless
the only check chosen is ``multinode``, which renders a stack of its own), ``--work DIR`` (scratch: clusters' folders,
job logs, storage; default: a new temp folder, kept), ``--checks`` (of ``jobs,outputs,resume,tune,preempt,multinode``;
default: all; ``npm run test:ray`` runs ``jobs,outputs,preempt`` in one lane and ``tune`` and ``multinode`` in
another, the multi-node job's kill-and-resume experiment standing in for the dev training job's ``resume``),
``--only`` (RayJob names) and ``--job-timeout`` (a hang guard per job run).
The session's ``Harness`` holds them and the rendered objects; each test module's parameter names the RayJobs its
check runs (``harness.PARAMETERS``), and each run is made once for all the tests that read it (a module-scoped
fixture, or ``Harness.smoke_runs``). Every RayJob gets the job checks once (``job_checks.py``): on a run of its own,
or on the last run of an experiment that runs it (``Harness.job_checks_from``; the marker ``job_checks_of``
deselects the others). A summary of every run ends the output."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

# The shared checks' asserts report like a test's own (before any test module imports them).
pytest.register_assert_rewrite("job_checks")

from harness import CHECKS, PARAMETERS, Harness  # noqa: E402
from processes import HANG_GUARD_S  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
#: The checks that run no dev RayJob: chosen alone, the dev stack is not rendered.
OWN_STACK_CHECKS = frozenset({"multinode"})
HARNESS = pytest.StashKey[Harness]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ray-gpu end-to-end")
    group.addoption(
        "--rendered", default=None, help="output of ray-gpu render --stack dev (default: rendered here by the CLI)"
    )
    group.addoption("--work", default=None, help="scratch directory (default: a new temp folder, kept)")
    group.addoption(
        "--checks", default=",".join(CHECKS), help=f"comma-separated, of {', '.join(CHECKS)} (default: all)"
    )
    group.addoption("--only", default=None, help="comma-separated RayJob names (default: all)")
    group.addoption("--job-timeout", type=float, default=HANG_GUARD_S, help="a hang guard per job run, in seconds")


def harness_of(config: pytest.Config) -> Harness:
    """The session's harness, made on first use: the options checked, the dev stack rendered when not given."""
    if HARNESS not in config.stash:
        checks = frozenset(config.getoption("--checks").split(","))
        if not checks <= set(CHECKS):
            raise pytest.UsageError(
                f"--checks: unknown {sorted(checks - set(CHECKS))}; choose from {', '.join(CHECKS)}"
            )
        work = config.getoption("--work") or tempfile.mkdtemp(prefix="ray-gpu-e2e-")
        timeout, only = config.getoption("--job-timeout"), config.getoption("--only")
        jobs = frozenset(only.split(",")) if only else None
        if checks <= OWN_STACK_CHECKS and not config.getoption("--rendered"):
            # No dev RayJob to run: the multi-node check renders its own stack (multinode.py).
            config.stash[HARNESS] = Harness({}, work, timeout, checks, jobs)
        else:
            rendered = config.getoption("--rendered") or render_dev_stack(Path(work) / "rendered")
            config.stash[HARNESS] = Harness.load(rendered, work, timeout, checks, jobs)
    return config.stash[HARNESS]


def render_dev_stack(out: Path) -> str:
    subprocess.run(
        ["node", str(REPO / "bin/ray-gpu.js"), "render", "--stack", "dev", "--out", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    return str(out)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for argname in PARAMETERS:
        if argname in metafunc.fixturenames:
            metafunc.parametrize(argname, harness_of(metafunc.config).parameter(argname), scope="module")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs_checks(*names): the test also asserts these --checks, deselected without them"
    )
    config.addinivalue_line(
        "markers",
        "job_checks_of(check): the job checks on the run of experiment CHECK (parameter CHECK_job), deselected for "
        "a job that gets them from another run (Harness.job_checks_from)",
    )


def _idle(item: pytest.Item, h: Harness, idle: set[str]) -> bool:
    """Whether a test has no chosen RayJob to run on, needs a check that was not chosen, or gives a job the job
    checks that another run of it gets."""
    needs = {name for mark in item.iter_markers("needs_checks") for name in mark.args}
    if bool(idle & set(getattr(item, "fixturenames", ()))) or not needs <= h.checks:
        return True
    params = getattr(item, "callspec", None)
    for mark in item.iter_markers("job_checks_of"):
        (check,) = mark.args
        name = params.params.get(f"{check}_job") if params else None
        if name is not None and h.job_checks_from(name) != check:
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselects the tests of the checks not chosen (or of no chosen RayJob), rather than skipping them."""
    h = harness_of(config)
    idle = {argname for argname in PARAMETERS if not h.parameter(argname)}
    deselected = [item for item in items if _idle(item, h, idle)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


@pytest.fixture(scope="session")
def harness(pytestconfig: pytest.Config) -> Harness:
    return harness_of(pytestconfig)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Every run made, as a Markdown table (the end of the log is what CI shows)."""
    if HARNESS not in config.stash or not config.stash[HARNESS].runs:
        return
    h = config.stash[HARNESS]
    terminalreporter.write_sep("-", f"job runs (logs and storage under {h.work})")
    terminalreporter.write_line("| run | exit code | wall s | values applied | bytes spilled | unbounded control |")
    terminalreporter.write_line("|---|---|---|---|---|---|")
    for r in h.runs:
        applied = "-" if r.applied is None else str(len(r.applied))
        control = (
            "-"
            if r.control is None
            else f"{r.control.held_bytes} B held on a {r.control.store_bytes} B store: spilled {r.control.spilled_bytes} B"
        )
        terminalreporter.write_line(
            f"| {r.label} | {r.rc} | {r.wall_seconds} | {applied} | {r.spill.bytes} | {control} |"
        )
