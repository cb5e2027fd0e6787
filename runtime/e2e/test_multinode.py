"""Multi-node DDP (``--checks multinode``; ``multinode.py``): the multinode stack's TrainingJob, 4 Ray Train workers
on 4 local Ray nodes (one per rendered worker pod) over gloo, run as the kill-and-resume experiment. Every attempt of
the run has the planned world size and every rank once, each rank on a Ray node of its own, and every worker the
rendered pods' transport environment exactly (the stack's pool has EFA: FI_PROVIDER, NCCL_NET and NCCL_SOCKET_IFNAME
among it, though gloo on CPU reads none of them; the pods' EFA interfaces and hugepages are not offered here); the
run resumes across the nodes from the checkpoint the killed worker left, every worker's data at its position (the
checks of ``test_resume.py``, on this experiment), trains the planned shape and hands Ray every planned value."""

from __future__ import annotations

import pytest
from harness import Harness
from job_checks import check_training_run
from multinode import MultiNodeRun, rendered_transport_env, run_multinode, worker_pods
from resume_experiment import KILL_AFTER_STEP, ResumeExperiment

# The kill-and-resume experiment's checks, collected here too: they read this module's ``resume`` fixture.
from test_resume import (  # noqa: F401
    test_every_row_is_trained_once_across_the_interruption,
    test_every_worker_continues_at_its_checkpointed_data_position,
    test_every_worker_skips_exactly_the_batch_its_checkpoint_recorded,
    test_every_worker_then_trains_the_rows_after_them,
    test_no_worker_trains_a_row_twice,
    test_the_killed_run_fails_or_ray_train_retries_it,
    test_the_resumed_run_finishes,
    test_the_run_resumes_from_the_checkpoint_the_worker_died_after,
)

pytestmark = pytest.mark.needs_checks("multinode")


@pytest.fixture(scope="module")
def multinode(harness: Harness) -> MultiNodeRun:
    return run_multinode(harness)


@pytest.fixture(scope="module")
def resume(multinode: MultiNodeRun) -> ResumeExperiment:
    return multinode.experiment


def test_the_job_has_a_local_ray_node_per_worker_pod_and_a_worker_per_node(multinode: MultiNodeRun) -> None:
    assert (worker_pods(multinode.job), multinode.world_size) == (4, 4)


def test_the_first_attempt_and_the_resumed_one_started_workers(multinode: MultiNodeRun) -> None:
    assert list(multinode.workers) == [None, KILL_AFTER_STEP], multinode.experiment.last.tail()


def test_every_attempt_has_the_planned_world_and_every_rank_once(multinode: MultiNodeRun) -> None:
    for attempt, workers in multinode.workers.items():
        assert [w.rank for w in workers] == list(range(multinode.world_size)), f"attempt from {attempt}"
        assert {w.world_size for w in workers} == {multinode.world_size}, f"attempt from {attempt}"


def test_each_rank_runs_on_a_ray_node_of_its_own(multinode: MultiNodeRun) -> None:
    for attempt, workers in multinode.workers.items():
        nodes = {w.node_id for w in workers}
        assert len(nodes) == len(workers) == worker_pods(multinode.job), f"attempt from {attempt}: {workers}"


def test_every_worker_process_gets_the_rendered_transport_environment(multinode: MultiNodeRun) -> None:
    rendered = rendered_transport_env(multinode.job)
    assert {"FI_PROVIDER", "NCCL_NET", "NCCL_SOCKET_IFNAME"} <= set(rendered), (
        f"the EFA pool's worker pods carry no EFA environment: {rendered}"
    )
    for attempt, workers in multinode.workers.items():
        assert [w.transport_env for w in workers] == [rendered] * len(workers), f"attempt from {attempt}"


def test_the_resumed_run_trains_the_planned_shape_with_every_planned_value(multinode: MultiNodeRun) -> None:
    check_training_run(multinode.experiment.last)
