#!/usr/bin/env bash
# Installs every dependency (scripts/install-deps.sh), configures and builds eitstream into ./build.
# Extra arguments go to CMake's configure step (e.g. -DEIT_WITH_CUDA=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
