#!/usr/bin/env bash
# npm run test:ray: the Python side for real, on CPU.
#   1. a virtual environment from runtime/requirements.txt (scripts/ray-venv.sh: rebuilt when the file changes; offline index)
#   2. the tuning-document loader fuzzed with the system python3 (runtime/tests/fuzz_contract.py: standard library
#      only), pytest of the runtime library (runtime/tests), of the Ray bench's reports (bench/ray) and the planner's
#      safety property (calibration/)
#   3. the dev stack rendered by the CLI, and each RayJob run on a local Ray cluster (pytest of runtime/e2e:
#      test_job_runs.py), with its reliability experiments: an embedding rerun SIGKILLed with a given number of parts
#      written must leave the previous committed output intact and readable (test_committed_outputs.py), and a
#      training run whose worker kills itself after a given checkpoint must resume model, optimizer and every
#      worker's data position (test_resume.py); ray-gpu tune names the stage each bad setting of the tune stack binds
#      and proposes no change on the dev embedding job's own run (test_tune_loop.py, test_job_runs.py); a training
#      job on a spot pool gets the interruption notice in the middle of a step, as a drain delivers it (the rendered
#      preStop hook, then SIGTERM, then a replacement node), and must checkpoint that step and resume with no row
#      trained twice (test_preemption.py).
#      --checks jobs,outputs,resume,tune,preempt picks among them (default: all), --only among the RayJobs; extra arguments to this script go to that pytest (its options: runtime/e2e/conftest.py;
#      runtime/e2e/run_jobs.py runs the same by hand)
#   4. every tuned lever checked against Ray's default on local Ray (runtime/e2e/levers.py, the levers stack)
# Every check asserts what Ray, PyTorch or the job decided (placement, counts, sizes, bytes, refusals), never a
# duration: how fast the levers run is measured by npm run bench:ray (scripts/bench-ray.sh), which never fails.
# Each local cluster is isolated (own temp folder, free ports, only its own processes stopped): runs side by side
# on one machine do not disturb each other.
set -euo pipefail
cd "$(dirname "$0")/.."
mark=$SECONDS
# each phase's time, printed again at the end (the end of the log is what CI shows)
phases=()
took() {
  phases+=("test:ray: $1 took $((SECONDS - mark)) s")
  echo "${phases[-1]}"
  mark=$SECONDS
}
VENV=$(realpath -m "${RAY_GPU_VENV:-.venv-ray}") # relative to the repository, or absolute
PYTHON=${PYTHON:-python3}
bash scripts/ray-venv.sh
took "the virtual environment"
echo "test:ray: the tuning-document loader fuzzed with the system $PYTHON (standard library only)"
"$PYTHON" runtime/tests/fuzz_contract.py
took "the loader fuzz"
export PATH="$VENV/bin:$PATH"
# The runtime library, for the scripts that import it outside runtime/ (the levers, the calibration). pytest of
# runtime/ finds it, its tests' helpers and the end-to-end modules from runtime/pyproject.toml (pythonpath); the
# Ray bench's tests import their modules from their own folder (pytest's rootdir).
export PYTHONPATH="$PWD/runtime"

echo "test:ray: lint (ruff), format (ruff format --check) and types (mypy) of the runtime library and the Ray bench"
(cd runtime && ruff check . ../bench/ray && ruff format --check . ../bench/ray && mypy)
took "lint, format and types"

echo "test:ray: runtime library tests"
python -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning runtime/tests
python -m pytest -q -p no:cacheprovider bench/ray
took "the runtime library tests"

echo "test:ray: the memory planner's activation terms against real saved tensors (random architectures, seeded)"
python -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning calibration/test_activation_bound.py
took "the activation calibration"

work=$(mktemp -d)
trap 'rm -rf "$work"; printf "%s\n" "${phases[@]}"' EXIT
node bin/ray-gpu.js render --stack dev --out "$work/rendered" >/dev/null
node bin/ray-gpu.js render -C runtime/e2e/levers-stack --stack levers --out "$work/levers-rendered" >/dev/null
echo "test:ray: running the rendered dev RayJobs on a local Ray cluster"
status=0
python -m pytest -p no:cacheprovider -s -W ignore::DeprecationWarning runtime/e2e --rendered "$work/rendered" --work "$work/run" "$@" || status=1
took "the dev RayJobs"
echo "test:ray: checking every tuned lever against Ray's default"
python runtime/e2e/levers.py --rendered "$work/levers-rendered" --work "$work/levers" --json "${RAY_GPU_LEVERS_JSON:-$work/levers.json}" || status=1
took "the levers"
exit $status
