#!/usr/bin/env bash
# The virtual environment of npm run test:ray and bench:ray, from runtime/requirements.txt and the machine's offline
# index, kept outside the clone so that every clone on a machine (CI's fresh one included) reuses it: one folder per
# requirements hash and interpreter under RAY_GPU_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/pulumi-ray-gpu), built
# only when missing, and .venv-ray in the repository a link to it (so `.venv-ray/bin/python ...` works as documented).
# A build is complete once its hash file is written, last; an incomplete one (a killed build) is removed and made
# again; two calls at once (CI starts one beside npm ci, test:ray another) take turns on a lock.
# RAY_GPU_VENV names a folder to use instead, built in place the same way (no link, no cache); PYTHON the interpreter
# it is made from (default python3). Prints the environment's absolute path on stdout, its messages on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
key=$( (cat runtime/requirements.txt && "$PYTHON" -c 'import sys; print(sys.version, sys.executable)') | sha256sum | cut -d' ' -f1)
if [ -n "${RAY_GPU_VENV:-}" ]; then
  VENV=$(realpath -m "$RAY_GPU_VENV")
else
  cache=$(realpath -m "${RAY_GPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-ray-gpu}")
  VENV="$cache/venv-ray-${key:0:16}"
fi
complete() { [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" = "$key" ]; }
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9
if ! complete; then
  echo "ray-venv: creating $VENV from runtime/requirements.txt" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  PIP_RETRIES=0 "$VENV/bin/pip" install --disable-pip-version-check --quiet -r runtime/requirements.txt 2>&1 |
    grep -v "^WARNING: Location" >&2 || true
  "$VENV/bin/python" -c "import ray, torch, transformers, peft, pytest" >&2 # fails loudly if the install did
  echo "$key" >"$VENV/.requirements.sha256"
fi
if [ -z "${RAY_GPU_VENV:-}" ]; then
  # An older checkout's .venv-ray was a folder of its own: a link takes its place.
  [ -L .venv-ray ] || rm -rf .venv-ray
  ln -sfn "$VENV" .venv-ray
fi
echo "$VENV"
