#!/usr/bin/env bash
# Issue 15 (3-D, large models) on the GPU machine, in one call: builds eitstream, the CUDA plugin
# and test_gpu; runs test_gpu's JAC-solve cases; times `model build` of a
# two-ring 32-electrode cylinder from a carried tetrahedral mesh (the device has no Gmsh, so the
# mesh is made elsewhere and its generation is not timed here) with JAC's dense solve on the GPU
# and on the CPU; times `model info` (header) and `model info --verify` (full load + id check);
# streams the model through `eitstream bench` (cuda, single frames, and cpu) and `eitstream run`.
#   source .device-deps/env.sh && scripts/device-jac3d.sh MESH_DIR FRAMES_NPY [SHARED_DATA_DIR]
# MESH_DIR: pyEIT-style CSV folder (nodes, elements, el_pos; .csv or .csv.gz); FRAMES_NPY: frames
# of the model's 928 measurements, replayed in a loop by `run`; SHARED_DATA_DIR: EIT_SHARED_DATA
# for the tests (pyeit/ball3d_h0_0.2). Logs under $OUT;
# the model files (0.8 GB each) stay in $TMPDIR.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
mesh=$(realpath "$1")
frames=$(realpath "$2")
data=${3:+$(realpath "$3")}
tmp=${TMPDIR:-/tmp}/eit-jac3d
mkdir -p "$tmp"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DEIT_WITH_CUDA=ON >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target eitstream eit_gpu test_gpu >>"$OUT/build.log" 2>&1 ||
  { grep -E "error" -A3 "$OUT/build.log" | head -60; exit 1; }
log "build $(($(date +%s) - t0)) s"
b=build-gpu
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$OUT/summary.txt"

log "test_gpu (the JAC solve cases)"
EIT_SHARED_DATA=$data timeout 60 $b/test_gpu -s -tc="*JAC solve*" 2>&1 | grep -E "relative error|SKIPPED|test cases|assertions|ERROR|FAILED" \
  | tee -a "$OUT/summary.txt"

run_timed() {  # name, command...: output to $OUT/<name>.log, wall/peak RSS lines to the summary
  local name=$1
  shift
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "$@" >"$OUT/$name.log" 2>&1
  else
    local s0=$(date +%s.%N)
    "$@" >"$OUT/$name.log" 2>&1
    echo "Elapsed (wall clock) $(echo "$(date +%s.%N) - $s0" | bc) s" >>"$OUT/$name.log"
  fi
  echo "rc $?" >>"$OUT/$name.log"
  grep -E "^(mesh|forward|jacobian|matrix|save|total) |Elapsed|Maximum resident|User time|System time|^rc " \
    "$OUT/$name.log" | sed "s/^/$name: /" | tee -a "$OUT/summary.txt"
}
build_args=(model build --mesh "csv:$mesh" --algorithm jac --prior kotre --p 0.5 --pattern planar)
log "model build, JAC solve on the GPU"
run_timed build_cuda $b/eitstream "${build_args[@]}" --backend cuda -o "$tmp/m_cuda.h5"
log "model build, JAC solve on the CPU (Eigen, one thread)"
run_timed build_cpu timeout 60 $b/eitstream "${build_args[@]}" --backend cpu -o "$tmp/m_cpu.h5"
grep -h "H stats\|^id" "$OUT/build_cuda.log" "$OUT/build_cpu.log" | tee -a "$OUT/summary.txt"
ls -l "$tmp"/*.h5 | tee -a "$OUT/summary.txt"

log "model info (header only), then --verify (load H + id check), page cache warm"
run_timed info_quick $b/eitstream model info "$tmp/m_cuda.h5"
run_timed info_verify $b/eitstream model info --verify "$tmp/m_cuda.h5"
head -12 "$OUT/info_quick.log" >>"$OUT/summary.txt"

log "bench, cuda, single frames, max rate"
timeout 60 $b/eitstream bench --model "$tmp/m_cuda.h5" --backend cuda --batch 1 --rate max \
  --transport inproc --frames 20000 --warmup 1000 --quiet --json "$OUT/bench_cuda.json" \
  >"$OUT/bench_cuda.log" 2>&1
echo "rc $?" >>"$OUT/bench_cuda.log"
tail -25 "$OUT/bench_cuda.log" | tee -a "$OUT/summary.txt"
log "bench, cpu (16 threads), max rate"
timeout 60 $b/eitstream bench --model "$tmp/m_cuda.h5" --backend cpu --cpu-threads 16 --batch 1 \
  --rate max --transport inproc --frames 200 --warmup 10 --quiet >"$OUT/bench_cpu.log" 2>&1
echo "rc $?" >>"$OUT/bench_cpu.log"
tail -12 "$OUT/bench_cpu.log" | tee -a "$OUT/summary.txt"
# --layout model: the frames are in the model's order (its two-ring planar table kept as is).
log "run, cuda, 20000 replayed frames as fast as possible, single frames, lossless"
run_timed run_cuda timeout 60 $b/eitstream run --model "$tmp/m_cuda.h5" --backend cuda \
  --source "$frames" --layout model --loop --policy lossless --frames 20000 --fps 0 --max-batch 1 --endpoint "ipc://$tmp/run.sock"
tail -15 "$OUT/run_cuda.log" >>"$OUT/summary.txt"
log "total $(($(date +%s) - t0)) s"
