"""The end-to-end tests of the rendered dev RayJobs on local Ray clusters (``npm run test:ray``; ``run_jobs.py``).

Options: ``--rendered DIR`` (the output of ``ray-gpu render --stack dev``; default: rendered here by the CLI),
``--work DIR`` (scratch: clusters' folders, job logs, storage; default: a new temp folder, kept), ``--checks`` (of
``jobs,outputs,resume,tune,preempt``; default: all), ``--only`` (RayJob names) and ``--job-timeout`` (a hang guard per job run).
The session's ``Harness`` holds them and the rendered objects; each test module's parameter names the RayJobs its
check runs (``harness.PARAMETERS``), and each run is made once for all the tests that read it (a module-scoped
fixture, or ``Harness.smoke_runs``). A summary of every run ends the output."""

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
        rendered = config.getoption("--rendered") or render_dev_stack(Path(work) / "rendered")
        only = config.getoption("--only")
        config.stash[HARNESS] = Harness.load(
            rendered, work, config.getoption("--job-timeout"), checks, frozenset(only.split(",")) if only else None
        )
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


def _idle(item: pytest.Item, idle: set[str], checks: frozenset[str]) -> bool:
    """Whether a test has no chosen RayJob to run on, or needs a check that was not chosen."""
    needs = {name for mark in item.iter_markers("needs_checks") for name in mark.args}
    return bool(idle & set(getattr(item, "fixturenames", ()))) or not needs <= checks


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselects the tests of the checks not chosen (or of no chosen RayJob), rather than skipping them."""
    h = harness_of(config)
    idle = {argname for argname in PARAMETERS if not h.parameter(argname)}
    deselected = [item for item in items if _idle(item, idle, h.checks)]
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
