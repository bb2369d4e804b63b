#!/usr/bin/env bash
# Builds eitstream on the GPU machine and runs the test suite (GPU tests included) and bench_cuda,
# writing logs and tables under $OUT (the device tool brings that folder back).
#   source .device-deps/env.sh && scripts/device-run.sh
# Environment: EIT_TARGETS (build targets, default all), EIT_TESTS (ctest -R regex, default all),
# EIT_BENCH_ARGS (e.g. --quick), EIT_SKIP_BENCH=1.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || true
{ nvcc --version | tail -2; nproc; } >>"$OUT/nvidia-smi.txt" 2>&1
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DEIT_WITH_CUDA=ON >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
targets=()
for t in ${EIT_TARGETS:-all}; do targets+=(--target "$t"); done
cmake --build build-gpu -j"$(nproc)" "${targets[@]}" >>"$OUT/build.log" 2>&1 ||
  { grep -E "error" -A3 "$OUT/build.log" | head -60; exit 1; }
echo "build: $(($(date +%s) - t0)) s; warnings: $(grep -c 'warning' "$OUT/build.log")"
# GPU tests one at a time (each owns the GPU); the rest in parallel.
ctest --test-dir build-gpu -R "${EIT_TESTS:-.}" -E '^test_gpu' -j8 --output-on-failure \
  >"$OUT/ctest.log" 2>&1
ctest --test-dir build-gpu -R '^test_gpu' -j1 --timeout 90 --output-on-failure -V >"$OUT/ctest-gpu.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|Failed|SKIPPED" "$OUT/ctest.log" | tail -5
grep -E "MESSAGE|relative error|device:|tests passed|tests failed|Failed|SKIPPED|ERROR" \
  "$OUT/ctest-gpu.log" | sed 's/^[0-9]*: //' | head -60
if [ "${EIT_SKIP_BENCH:-0}" != 1 ] && [ -x build-gpu/bench_cuda ]; then
  timeout 300 build-gpu/bench_cuda --out "$OUT/bench.md" ${EIT_BENCH_ARGS:-} >"$OUT/bench.log" 2>&1
  echo "bench_cuda exit $?"
  cat "$OUT/bench.md" 2>/dev/null || tail -40 "$OUT/bench.log"
fi
exit $rc
