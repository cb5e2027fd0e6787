#!/usr/bin/env bash
# npm run test:ray: the Python side for real, on CPU. After the virtual environment (scripts/ray-venv.sh: kept outside
# the clone, one per requirements hash; offline index), three lanes run side by side, each logging to a file printed
# when all are done (the RayJobs' lane prints as it goes):
#   checks: the tuning-document loader fuzzed with the system python3 (runtime/tests/fuzz_contract.py: standard
#      library only); ruff, ruff format and mypy of the runtime library and the Ray bench; pytest of the runtime library
#      (runtime/tests), of the Ray bench's reports (bench/ray) and the planner's safety property (calibration/)
#   rayjobs: the dev stack rendered by the CLI, and each RayJob run on a local Ray cluster (pytest of runtime/e2e:
#      test_job_runs.py), with its reliability experiments: an embedding rerun SIGKILLed with a given number of parts
#      written must leave the previous committed output intact and readable (test_committed_outputs.py), and (with
#      --checks resume) a training run whose worker kills itself after a given checkpoint must resume model,
#      optimizer and every worker's data position (test_resume.py); ray-gpu tune reads the record of each bad
#      setting of the tune stack and of the dev embedding job's own run: the workers' store Ray measured, blocks sized
#      from it after a spill, a verdict that agrees with the record's shares (test_tune_loop.py, test_job_runs.py); a
#      training job on a spot pool gets the interruption notice in the middle of a step, as a drain delivers it (the
#      rendered preStop hook, then SIGTERM, then a replacement node), and must checkpoint that step and resume with no
#      row trained twice (test_preemption.py); that run gets the job's checks, and the job no run of its own.
#      --checks jobs,outputs,resume,tune,preempt,multinode picks among them (default: all), --only among the
#      RayJobs; extra arguments to this script go to that pytest (its options: runtime/e2e/conftest.py;
#      runtime/e2e/run_jobs.py runs the same by hand). With no arguments it runs jobs,outputs,preempt: the
#      kill-and-resume experiment runs on the multi-node job (the levers lane) instead of the dev training job
#   levers: every tuned lever checked against Ray's default on local Ray (runtime/e2e/levers.py, the levers stack);
#      then, when this script is given no arguments, the tune checks (test_tune_loop.py, --checks tune), moved here
#      from the rayjobs lane, which is the longer one; and the multi-node check (test_multinode.py, --checks
#      multinode): the multinode stack's training job (runtime/e2e/multinode-stack) on 4 local Ray nodes, DDP over
#      gloo, killed and resumed across them: every rank once in the planned world, each on a node of its own, every
#      worker process with the worker pods' rendered transport environment (the EFA pool's FI_PROVIDER, NCCL_NET,
#      NCCL_SOCKET_IFNAME), every worker's data resumed, and the job's checks on the resumed run
# Every check asserts what Ray, PyTorch or the job decided (placement, counts, sizes, bytes, refusals), never a
# duration: how fast the levers run is measured by npm run bench:ray (scripts/bench-ray.sh), which never fails. So the
# lanes may share the cores, with each other and with npm test (CI runs both at once): a busier machine slows them and
# changes no verdict. Each local cluster is isolated (own temp folder, free ports, only its own processes stopped):
# clusters side by side do not disturb each other. TEST_RAY_LANES=serial runs the lanes one after another.
# Each phase's wall and CPU seconds end the output (scripts/lib/phases.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/phases.sh
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"; phases_report "test:ray"' EXIT

VENV=$(phase "test:ray: the virtual environment" bash scripts/ray-venv.sh)
export PATH="$VENV/bin:$PATH"
# The runtime library, for the scripts that import it outside runtime/ (the levers, the calibration). pytest of
# runtime/ finds it, its tests' helpers and the end-to-end modules from runtime/pyproject.toml (pythonpath); the
# Ray bench's tests import their modules from their own folder (pytest's rootdir).
export PYTHONPATH="$PWD/runtime"
# One compute thread per process (PyTorch's intra-op pool, OpenMP), in every lane: the lanes and npm test already
# oversubscribe the cores, where a process's extra threads only wait on each other. Measured beside one busy core: the
# runtime library tests took 125 CPU-s with one thread against 150 with PyTorch's default, and the activation
# calibration 10 against 23 beside three. Ray's nodes of the job clusters get the same (job_cluster.py).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"

checks() { # every check runs, whatever an earlier one found; the lane fails if any did
  local rc=0
  echo "test:ray: the tuning-document loader fuzzed with the system $PYTHON (standard library only)"
  phase "test:ray: the loader fuzz" "$PYTHON" runtime/tests/fuzz_contract.py || rc=1
  echo "test:ray: lint (ruff), format (ruff format --check) and types (mypy) of the runtime library, the Ray bench and the calibration"
  phase "test:ray: lint, format and types" \
    bash -c 'cd runtime && ruff check . ../bench/ray ../calibration && ruff format --check . ../bench/ray ../calibration && mypy' || rc=1
  echo "test:ray: runtime library tests"
  phase "test:ray: the runtime library tests" \
    python -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning runtime/tests || rc=1
  phase "test:ray: the Ray bench's report tests" python -m pytest -q -p no:cacheprovider bench/ray || rc=1
  echo "test:ray: the memory planner's activation terms against real saved tensors (random architectures, seeded), eager peaks"
  echo "test:ray: the peaks with the LM head adapted and with gradients held across micro-batches, and the device check's CPU path"
  phase "test:ray: the activation calibration" \
    python -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning calibration/test_cuda_autocast.py \
    calibration/test_eager_peak.py calibration/test_bitsandbytes_targets.py \
    calibration/test_activation_bound.py calibration/test_measure_on_cuda.py calibration/test_accumulation_peak.py || rc=1
  return $rc
}

# The tune checks run in the levers lane, which ends sooner, so the lanes end closer together (the cores are busy
# throughout, so this balances the lanes rather than shortening the run). Arguments to this script (--checks, --only)
# keep every check of runtime/e2e in the RayJobs lane, as asked. The multi-node check is the default run's
# kill-and-resume experiment (on 4 nodes), so the RayJobs lane leaves resume out: --checks resume still runs it on the
# dev training job. The dev training job, on a spot pool, gets its job checks on its preemption run.
if [ $# -eq 0 ]; then
  RAYJOBS_CHECKS=(--checks jobs,outputs,preempt)
  TUNE_IN_LEVERS=1 # the tune and multi-node checks
else
  RAYJOBS_CHECKS=()
  TUNE_IN_LEVERS=0
fi

rayjobs() {
  node bin/ray-gpu.js render --stack dev --out "$work/rendered" >/dev/null &&
    echo "test:ray: running the rendered dev RayJobs on local Ray clusters" &&
    phase "test:ray: the dev RayJobs" python -m pytest -p no:cacheprovider -s -W ignore::DeprecationWarning runtime/e2e \
      --rendered "$work/rendered" --work "$work/run" "${RAYJOBS_CHECKS[@]}" "$@"
}

tune_checks() {
  node bin/ray-gpu.js render --stack dev --out "$work/tune-rendered" >/dev/null &&
    echo "test:ray: ray-gpu tune on each bad setting's run of the tune stack" &&
    phase "test:ray: the tune checks" python -m pytest -p no:cacheprovider -s -W ignore::DeprecationWarning \
      runtime/e2e/test_tune_loop.py --rendered "$work/tune-rendered" --work "$work/tune-run" --checks tune
}

multinode_checks() {
  echo "test:ray: DDP across 4 local Ray nodes (the multinode stack), killed and resumed"
  phase "test:ray: the multi-node training" python -m pytest -p no:cacheprovider -s -W ignore::DeprecationWarning \
    runtime/e2e/test_multinode.py --work "$work/multinode-run" --checks multinode
}

levers() {
  local rc=0
  node bin/ray-gpu.js render -C runtime/e2e/levers-stack --stack levers --out "$work/levers-rendered" >/dev/null &&
    echo "test:ray: checking every tuned lever against Ray's default" &&
    phase "test:ray: the levers" python runtime/e2e/levers.py --rendered "$work/levers-rendered" --work "$work/levers" \
      --json "${RAY_GPU_LEVERS_JSON:-$work/levers.json}" || rc=1
  if [ "$TUNE_IN_LEVERS" = 1 ]; then
    tune_checks || rc=1
    multinode_checks || rc=1
  fi
  return $rc
}

status=0
if [ "${TEST_RAY_LANES:-parallel}" = serial ]; then
  checks || status=1
  rayjobs "$@" || status=1
  levers || status=1
else
  logged "$work" checks checks &
  logged "$work" levers levers &
  rayjobs "$@" || status=1
  wait
  for name in checks levers; do
    show_log "$work" "$name" "test:ray: the $name lane's log" || status=1
  done
fi
exit $status
