#!/usr/bin/env bash
# Quick start, command 2: install what the tests need, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
npm test -- "$@"
