#!/usr/bin/env bash
# The documentation site, warnings as errors: a broken docstring, cross-reference or page link fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
start=$SECONDS
python -m sphinx -W --keep-going -q -b html -c docs . "$out/html"
echo "docs: built in $((SECONDS - start)) s ($(find "$out/html" -name '*.html' | wc -l) pages)"
