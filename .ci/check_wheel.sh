#!/usr/bin/env bash
# The package as a user installs it: build the wheel and sdist, check them, install the wheel alone into a fresh
# virtual environment outside the checkout, and run .ci/wheel_smoke.py there (quick start, CLI, every shipped tag).
# Run from the repository root with the CI venv active (it has build and twine) and $STGNN_DIAG_DATA set.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
# the smoke test runs in a temporary folder: a relative data root is taken from here, the repository root
if [ -n "${STGNN_DIAG_DATA:-}" ]; then STGNN_DIAG_DATA="$(realpath -m "$STGNN_DIAG_DATA")"; export STGNN_DIAG_DATA; fi
wheels="$(cd .. && pwd)/shared/wheels"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
python -m build --wheel --sdist --outdir "$tmp/dist" . > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
python -m twine check --strict "$tmp/dist"/*
whl=$(ls "$tmp/dist"/stgnn_diag-*.whl)
want=$(git ls-files 'stgnn_diag/zoo/weights/*.pt' | wc -l)
have=$(python -m zipfile -l "$whl" | grep -c 'stgnn_diag/zoo/weights/.*\.pt' || true)
[ "$want" -eq "$have" ] || { echo "the wheel holds $have of the $want shipped weight files"; exit 1; }
if python -m zipfile -l "$whl" | grep -qE '^(tests|models|benchmarks|datasets)/'; then
    echo "the wheel holds files outside the package"; exit 1
fi
echo "wheel: $(basename "$whl"), $(du -h "$whl" | cut -f1), $have weight files"
python3.11 -m venv "$tmp/venv"
# A local wheelhouse of every dependency (torch pinned to the CPU build), then the install from it alone
# (--no-index): the wheel's metadata names everything it needs. The pip configuration's mirror notes are noise.
quiet() { grep -v "^WARNING: Location" || true; }
"$tmp/venv/bin/pip" download -q -d "$tmp/wheelhouse" --find-links "$wheels" "torch==2.13.0" "${whl}[train]" 2>&1 | quiet
"$tmp/venv/bin/pip" install -q --no-index --find-links "$tmp/wheelhouse" --find-links "$wheels" \
    "torch==2.13.0" "${whl}[train]" 2>&1 | quiet
"$tmp/venv/bin/pip" check
cp .ci/wheel_smoke.py "$tmp/"
cd "$tmp"   # nothing of the checkout on sys.path
STGNN_DIAG_DATA="${STGNN_DIAG_DATA:-$(dirname "$repo")/shared/data}" PATH="$tmp/venv/bin:$PATH" \
    "$tmp/venv/bin/python" wheel_smoke.py
echo "check_wheel: passed in $((SECONDS - start)) s"
