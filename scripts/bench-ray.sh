#!/usr/bin/env bash
# npm run bench:ray: how fast the timing-sensitive levers run, tuned against default, on a local Ray cluster of the
# rendered levers stack (bench/ray/levers_bench.py); then the closed loop of ray-gpu tune, each bad setting of the
# tune stack against its tuned re-plan (bench/ray/tune_bench.py). Reports medians, ratios and the machine's load;
# never fails on a number. Writes out/bench-ray/levers.{json,md} and tune.{json,md} (BENCH_RAY_OUT names another
# folder); extra arguments go to levers_bench.py (--runs N, default 5; --only actor_idle,data_wait,...);
# BENCH_RAY_TUNE_RUNS sets the tune bench's runs a side (default 3), BENCH_RAY_PARTS=levers or tune runs one part.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=$(bash scripts/ray-venv.sh) # built when missing (kept outside the clone)
export PATH="$VENV/bin:$PATH"
export PYTHONPATH="$PWD/runtime:$PWD/runtime/e2e:$PWD/bench/ray"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node bin/ray-gpu.js render -C runtime/e2e/levers-stack --stack levers --out "$work/rendered" >/dev/null
parts=${BENCH_RAY_PARTS:-levers,tune}
status=0
if [[ ,$parts, == *,levers,* ]]; then
  python bench/ray/levers_bench.py --rendered "$work/rendered" --work "$work/run" --out "${BENCH_RAY_OUT:-out/bench-ray}" "$@" || status=1
fi
if [[ ,$parts, == *,tune,* ]]; then
  python bench/ray/tune_bench.py --work "$work/tune" --out "${BENCH_RAY_OUT:-out/bench-ray}" --runs "${BENCH_RAY_TUNE_RUNS:-3}" || status=1
fi
exit $status
