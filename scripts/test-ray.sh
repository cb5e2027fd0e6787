#!/usr/bin/env bash
# npm run test:ray: the Python side for real, on CPU.
#   1. a virtual environment from runtime/requirements.txt (scripts/ray-venv.sh: rebuilt when the file changes; offline index)
#   2. the tuning-document loader fuzzed with the system python3 (runtime/tests/fuzz_contract.py: standard library
#      only), pytest of the runtime library (runtime/tests), of the Ray bench's reports (bench/ray) and the planner's
#      safety property (calibration/)
#   3. the dev stack rendered by the CLI, and each RayJob run on a local Ray cluster (runtime/e2e/run_jobs.py), with
#      its reliability experiments: an embedding rerun SIGKILLed with a given number of parts written must leave the
#      previous committed output intact and readable (committed_outputs.py), and a training run whose worker kills
#      itself after a given checkpoint must resume model, optimizer and every worker's data position
#      (data_positions.py). run_jobs.py --checks jobs,outputs,resume picks among them (default: all); extra
#      arguments to this script go to run_jobs.py
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
# The runtime library, the end-to-end scripts (they import each other) and the Ray bench's modules.
export PYTHONPATH="$PWD/runtime:$PWD/runtime/e2e:$PWD/bench/ray"

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
python runtime/e2e/run_jobs.py --rendered "$work/rendered" --work "$work/run" "$@" || status=1
took "the dev RayJobs"
echo "test:ray: checking every tuned lever against Ray's default"
python runtime/e2e/levers.py --rendered "$work/levers-rendered" --work "$work/levers" --json "${RAY_GPU_LEVERS_JSON:-$work/levers.json}" || status=1
took "the levers"
exit $status
