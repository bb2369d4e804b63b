#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then runs every test. GPU tests skip visibly without a
# device; tests that read ../shared/data skip visibly when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh "$@"
ctest --test-dir build --output-on-failure -j"$(nproc)"
