#!/usr/bin/env bash
# Builds the pipeline tests with ThreadSanitizer (into ./build-tsan) and runs them: the SPSC
# queue, the pool, the latency histograms and the three-stage Pipeline under two- and
# three-thread load. Any data race fails the run (halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEIT_SANITIZE_THREAD=ON \
  -DEIT_WITH_CUDA=OFF ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER}
cmake --build build-tsan -j"$(nproc)" --target test_pipeline
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  ./build-tsan/tests/test_pipeline "$@"
