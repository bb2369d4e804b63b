#!/usr/bin/env bash
# Issue 9's streaming-core measurements on the GPU machine in one go: builds eitstream and the CUDA
# plugin, then `eitstream bench` at 1 kHz over ipc and tcp (balanced against spin, CPU and CUDA, in
# one process each, so the ratios are same-run), unpaced throughput through PUSH (lossless, counts
# delivered frames) at batch 16 and 256 over ipc and inproc (and the CPU backend split over 4 and
# 8 threads), and `model build` of the default model. Logs and JSON under $OUT.
#   source .device-deps/env.sh && scripts/device-bench-core.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build-gpu
{ nvidia-smi -L; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|MHz'; uptime;
  ls -l /dev/cpu_dma_latency; id -u; cat /sys/devices/system/cpu/cpuidle/current_driver;
  grep . /sys/devices/system/cpu/cpu0/cpuidle/state*/name 2>/dev/null; } >"$OUT/machine.txt" 2>&1
t0=$(date +%s)
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DEIT_WITH_CUDA=ON \
  >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
cmake --build $B -j"$(nproc)" --target eitstream eit_gpu test_pipeline >>"$OUT/build.log" 2>&1 ||
  { grep -E "error" -A3 "$OUT/build.log" | head -60; exit 1; }
echo "build: $(($(date +%s) - t0)) s"
E=$B/eitstream
$B/tests/test_pipeline -tc='*CPU reconstructor*,*paced*' >"$OUT/test_pipeline.txt" 2>&1
echo "test_pipeline (CPU reconstructor, paced source): exit $?"; tail -3 "$OUT/test_pipeline.txt"
run() {  # name, seconds, args...
  local name=$1 secs=$2; shift 2
  echo "== $name: eitstream $*" | tee -a "$OUT/commands.txt"
  timeout "$secs" $E "$@" --json "$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.err"
  echo "exit $?"; cat "$OUT/$name.txt"; grep -E "hold|error|Error" "$OUT/$name.err" | head -5
}
run lat_ipc 150 bench --rate 1000 --backend cpu,cuda --size 1024x208 --transport ipc \
  --latency-mode balanced,spin --frames 5000 --warmup 200
run lat_tcp 80 bench --rate 1000 --backend cpu,cuda --size 1024x208 --transport tcp \
  --latency-mode spin --frames 5000 --warmup 200
run max 150 bench --rate max --backend cpu,cuda --size 1024x208 --batch 16,256 \
  --transport ipc,inproc --frames 50000 --warmup 1000
for t in 4 8; do
  run max_cpu_t$t 60 bench --rate max --backend cpu --cpu-threads $t --size 1024x208 \
    --batch 64,256 --transport ipc --frames 50000 --warmup 1000
done
echo "== model build (default GREIT), 5 runs"
TIMEFORMAT='wall %3R s (user %3U, sys %3S)'
for i in 1 2 3 4 5; do
  { time $E model build --force -o /tmp/eit-default.h5 >"$OUT/model_build_out.txt" 2>&1; } 2>&1
done | tee "$OUT/model_build.txt"
cat "$OUT/model_build_out.txt"
