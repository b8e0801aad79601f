#!/usr/bin/env bash
# The mutation check's one command (see run.py beside it and docs/testing.md#mutation-check):
# tools/mutants/run.sh [--only=ID,...] [--rotate=N] [--commit=REV] [--list]
# Exit 0 only when every chosen mutant was killed; 1 if any survived, was stale or did not build.
set -euo pipefail
exec python3 "$(dirname "$0")/run.py" "$@"
