#!/usr/bin/env bash
# The virtual environment of npm run test:ray, from runtime/requirements.txt and the machine's offline index: built
# when it is missing or the file changed (its hash is kept in the environment), otherwise left as it is.
# RAY_GPU_VENV names it (default .venv-ray), PYTHON the interpreter it is made from (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${RAY_GPU_VENV:-.venv-ray}
PYTHON=${PYTHON:-python3}
want=$(sha256sum runtime/requirements.txt | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
echo "ray-venv: creating $VENV from runtime/requirements.txt"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
PIP_RETRIES=0 "$VENV/bin/pip" install --disable-pip-version-check --quiet -r runtime/requirements.txt 2>&1 | grep -v "^WARNING: Location" || true
"$VENV/bin/python" -c "import ray, torch, transformers, peft, pytest" # fails loudly if the install did
echo "$want" > "$VENV/.requirements.sha256"
