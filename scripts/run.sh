#!/usr/bin/env bash
# Quick start, command 1: install what the box needs, then run it in the
# foreground with the text console. Without audio or GPIO hardware it uses the
# simulated devices and says so. Ctrl-C stops it cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# This script runs `homeagent run` itself: a leading "run" (as in `homeagent run --data-dir X`) is that word again.
if [ "${1:-}" = "run" ]; then shift; fi
exec node dist/src/cli/main.js run --console "$@"
