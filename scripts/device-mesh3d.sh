#!/usr/bin/env bash
# Issue 15 on the GPU machine, Gmsh included: times `eitstream model build` of the two-ring
# 32-electrode cylinder (radius 1, height 1, JAC kotre p 0.5, planar pattern, point electrodes)
# WITH its Gmsh meshing, then streams the model through `eitstream run` (frames written here, in
# the model's own measurement order, replayed in a loop as fast as possible).
#   scripts/device-mesh3d.sh [BACKEND=cuda] [H0=0.042] [BUILD_DIR=build-gpu] [FRAMES] [MESHER]
# MESHER: delaunay (default) or extruded (`model build --mesher`; H0 0.068 gives 207,036
# tetrahedra with it, 0.1 gives 99,792).
# From the repository root after the build in BUILD_DIR. The machine has no Gmsh: carry
# .gmsh-bundle (scripts/make-gmsh-bundle.sh) and source .gmsh-bundle/env.sh BEFORE configuring
# the build, so CMake builds libeit_gmsh.so; when BUILD_DIR lacks it, this script sources the
# bundle, reconfigures and rebuilds eitstream (slow: most objects see EIT_HAVE_GMSH change).
# One device call (carry .device-deps and .gmsh-bundle, ~52 MB together):
#   source .device-deps/env.sh && source .gmsh-bundle/env.sh && cmake -S . -B build-gpu \
#     -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DEIT_WITH_CUDA=ON >$OUT/cmake.log &&
#   cmake --build build-gpu -j16 --target eitstream eit_gpu >$OUT/build.log && grep gmsh \
#     $OUT/cmake.log && scripts/device-mesh3d.sh cuda 0.042 build-gpu
# H0 0.042 gives 219,654 tetrahedra here. FRAMES for `run`: default 20000 (cuda), 100 (cpu; all
# cores). Logs in $OUT (default ./out); the model file (0.8 GB at H0 0.042) in $TMPDIR.
set -uo pipefail
cd "$(dirname "$0")/.."
backend=${1:-cuda}
h0=${2:-0.042}
b=${3:-build-gpu}
frames=${4:-$([ "$backend" = cuda ] && echo 20000 || echo 100)}
mesher=${5:-delaunay}
OUT=${OUT:-$PWD/out}
tmp=${TMPDIR:-/tmp}/eit-mesh3d
mkdir -p "$OUT" "$tmp"
summary=$OUT/mesh3d-summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
t0=$(date +%s)

if ! ldconfig -p 2>/dev/null | grep -q 'libgmsh\.so' && [ -f .gmsh-bundle/env.sh ]; then
  source .gmsh-bundle/env.sh >/dev/null
  say "gmsh bundle: $(ls "${GMSH_BUNDLE_DIR:-/tmp/gmsh-bundle}/lib" | wc -l) files, unpacked in $(($(date +%s) - t0)) s"
fi
if [ ! -f "$b/libeit_gmsh.so" ]; then
  say "$b has no libeit_gmsh.so: reconfiguring with Gmsh and rebuilding eitstream"
  { cmake -S . -B "$b" && cmake --build "$b" -j"$(nproc)" --target eitstream; } >"$OUT/mesh3d-build.log" 2>&1 ||
    { tail -20 "$OUT/mesh3d-build.log"; exit 1; }
  say "rebuild done at $(($(date +%s) - t0)) s"
fi
ldd "$b/libeit_gmsh.so" | grep -E 'libgmsh|libTKernel|not found' | sed 's/ (0x.*//' | tee -a "$summary"

# model build, the JAC solve on $backend; `model build` prints its steps in ms.
log=$OUT/mesh3d-build-$backend.log
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -v)
s0=$(date +%s%N)
"${timer[@]}" timeout 100 "$b/eitstream" model build --dim 3 --mesh circle --height 1 --rings 2 \
  --electrodes 32 --h0 "$h0" --algorithm jac --prior kotre --p 0.5 --pattern planar \
  --backend "$backend" --mesher "$mesher" --force -o "$tmp/m.h5" >"$log" 2>&1
rc=$?
say "model build --h0 $h0 --mesher $mesher --backend $backend: rc $rc, wall $(awk -v a="$s0" -v b="$(date +%s%N)" 'BEGIN {printf "%.2f", (b - a) / 1e9}') s"
grep -E '^(mesh|forward|jacobian|matrix|save|total) ' "$log" | tee -a "$summary"
awk '/^(mesh|forward|jacobian|matrix) / {s += $2} END {printf "mesh + forward + Jacobian + H: %.0f ms\n", s}' \
  "$log" | tee -a "$summary"
grep -E 'Maximum resident|User time|System time|Percent of CPU' "$log" | sed 's/^\s*//' | tee -a "$summary"
grep -E '^(id|H stats) ' "$log" | tee -a "$summary"
[ $rc -eq 0 ] || { tail -5 "$log"; exit 1; }

# Frames in the model's measurement order (--layout model): 200 frames of smooth values, float32
# .npy written by perl (part of every Debian/Ubuntu base system).
n_meas=$(grep -E '^H +[0-9]' "$log" | sed -E 's/.*× ([0-9]+).*/\1/')
perl -e 'my ($n, $m, $f) = @ARGV;
  my $h = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: ($n, $m), }";
  $h .= " " x ((64 - (11 + length($h)) % 64) % 64) . "\n";
  open(my $o, ">:raw", $f) or die "$f: $!";
  print $o "\x93NUMPY\x01\x00", pack("v", length($h)), $h;
  for my $t (0 .. $n - 1) { print $o pack("f<*", map { 1 + 0.05 * sin(6.2831853 * $t / 50 + 0.1 * $_) } 0 .. $m - 1) }
  close $o or die' 200 "$n_meas" "$tmp/frames.npy" || exit 1
# cuda: single frames (the ≥ 4,000 frames/s aim); cpu: batches split over all cores (the CPU
# backend splits rows only for batches of more than one frame).
opts=(--max-batch 1)
[ "$backend" = cpu ] && opts=(--cpu-threads "$(nproc)")
log=$OUT/mesh3d-run-$backend.log
timeout 90 "$b/eitstream" run --model "$tmp/m.h5" --backend "$backend" "${opts[@]}" \
  --source "$tmp/frames.npy" --layout model --loop --frames "$frames" --fps 0 --policy lossless \
  --endpoint "ipc://$tmp/run.sock" --quiet >"$log" 2>&1
say "run --backend $backend, $frames frames of $n_meas: rc $?"
grep -E '^(eitstream: replay|frames:|run:)|dequeued→done|submitted→done' "$log" | tee -a "$summary"
say "total $(($(date +%s) - t0)) s"
