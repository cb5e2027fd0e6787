#!/usr/bin/env bash
# npm run bench:ray: how fast the timing-sensitive levers run, tuned against default, on a local Ray cluster of the
# rendered levers stack (bench/ray/levers_bench.py); then the closed loop of ray-gpu tune, each bad setting of the
# tune stack against its tuned re-plan (bench/ray/tune_bench.py). Reports medians, ratios and the machine's load;
# never fails on a number. Writes out/bench-ray/levers.{json,md} and tune.{json,md} (BENCH_RAY_OUT names another
# folder); extra arguments go to levers_bench.py (--runs N, default 5; --only actor_idle,data_wait,...);
# BENCH_RAY_TUNE_RUNS sets the tune bench's runs a side (default 3). BENCH_RAY_PARTS picks the parts (default
# levers,embed,tune): embed is the embedding job tuned against Ray's defaults and each lever alone
# (bench/ray/embed_bench.py, out/bench-ray/embed.{json,md}; it takes --runs N too, default 3 rounds). Each part that
# ran to the end has its table copied into the docs page that shows it (bench/ray/docs_tables.py: docs/runtime-levers.md,
# docs/tune.md); BENCH_RAY_DOCS=0 leaves the pages alone.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=$(bash scripts/ray-venv.sh) # built when missing (kept outside the clone)
export PATH="$VENV/bin:$PATH"
export PYTHONPATH="$PWD/runtime:$PWD/runtime/e2e:$PWD/bench/ray"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node bin/ray-gpu.js render -C runtime/e2e/levers-stack --stack levers --out "$work/rendered" >/dev/null
parts=${BENCH_RAY_PARTS:-levers,embed,tune}
out=${BENCH_RAY_OUT:-out/bench-ray}
status=0
done_parts=()
part() { # part NAME CMD...: runs one part; a part that could not run fails the bench, and its table is not copied
  local name=$1
  shift
  [[ ,$parts, == *,$name,* ]] || return 0
  if "$@"; then done_parts+=("$name"); else status=1; fi
}
part levers python bench/ray/levers_bench.py --rendered "$work/rendered" --work "$work/run" --out "$out" "$@"
part embed python bench/ray/embed_bench.py --rendered "$work/rendered" --work "$work/embed" --out "$out" "$@"
part tune python bench/ray/tune_bench.py --work "$work/tune" --out "$out" --runs "${BENCH_RAY_TUNE_RUNS:-3}"
if [ "${BENCH_RAY_DOCS:-1}" != 0 ] && [ ${#done_parts[@]} -gt 0 ]; then
  python bench/ray/docs_tables.py --repo . --out "$out" --parts "$(IFS=,; echo "${done_parts[*]}")" || status=1
fi
exit $status
