#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, one per codec and one per recon file reader) with clang into ./build-fuzz and runs
# each for N seconds (default 10) on a small seed corpus: generated here, plus pieces cut from
# ../shared/data/recordings when present. Fails when any target finds a crash, a leak or a hang.
#   scripts/fuzz.sh [--seconds N] [--jobs J] [--seed S] [target ...]
# --seed S fixes libFuzzer's mutation sequence (CI uses it, so a failure there replays here with
# the same seed); without it each run explores from a fresh random seed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=10
jobs=2
seed=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

build=build-fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DEIT_FUZZ=ON -DEIT_WITH_CUDA=OFF -DEIT_NATIVE=OFF >/dev/null
fi
cmake --build "$build" -j"$jobs" --target fuzz_all
if [ ${#targets[@]} -eq 0 ]; then
  for bin in "$build"/fuzz/fuzz_*; do targets+=("$(basename "$bin")"); done
fi

# Seed corpora: small valid examples of each format, so the fuzzer starts inside the codecs.
seeds="$build/seeds"
rm -rf "$seeds"
python3 - "$seeds" "${EIT_SHARED_DATA:-../shared/data}/recordings" <<'PY'
import os, struct, sys
out, rec = sys.argv[1], sys.argv[2]
def put(target, name, data):
    d = os.path.join(out, target); os.makedirs(d, exist_ok=True)
    open(os.path.join(d, name), "wb").write(data)
def shared(name):
    p = os.path.join(rec, name)
    return open(p, "rb").read() if os.path.exists(p) else None
chunks = bytes([0, 3, 17, 200, 1, 64, 255, 9])
# OpenEIT lines, 8 electrodes (32 values): simulator and firmware dialects.
sim = ("magnitudes : " + "".join(f"{0.25 + i / 7:.17g}," for i in range(32)) + "\n").encode()
fw = ("magnitudes: " + "".join(f"{100 + i:8d}.{i * 37 % 10000:04d}," for i in range(32)) + "\r\n").encode()
put("fuzz_openeit_lines", "sim", chunks + sim + sim)
put("fuzz_openeit_lines", "fw", chunks + fw + b"debug\r\n" + fw[:-2])
put("fuzz_openeit_text", "mixed.txt", b"\n" + sim + fw + fw[:200])
# Raw float32 frames: a full 16x16 table.
frame = struct.pack("<256f", *[1.0 + i for i in range(256)])
put("fuzz_raw_frames", "two", chunks + frame + frame[:100])
# CSV: 208 values per row.
row = ",".join(f"{i * 0.001:.6f}" for i in range(208))
put("fuzz_csv", "rows.csv", ("c" + ",c" * 207 + "\n" + row + "\n" + row + "\r\n").encode())
# .npy: 2 frames of 208 float32 and of 256 float64.
def npy(descr, shape, data):
    h = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + data
put("fuzz_npy", "f4.npy", npy("<f4", "(2, 208)", struct.pack("<416f", *range(416))))
put("fuzz_npy", "f8.npy", npy("<f8", "(2, 256)", struct.pack("<512d", *range(512))))
# Dräger .eit v51: header and two frames (cut from the real file when present).
d = shared("draeger_ID_SC_10_60.eit")
if d:
    off = struct.unpack("<I", d[4:8])[0] + 16
    put("fuzz_draeger_eit", "real2.eit", d[:off + 2 * 5495])
text = b"\r\n---Draeger EIT-Software V1.20---\r\nFormat:    51\r\nFramerate [Hz]:    20\r\n"
body = b"".join(struct.pack("<600d", *[f + k / 1000 for k in range(600)]) + b"\0" * 695 for f in range(2))
put("fuzz_draeger_eit", "gen.eit", struct.pack("<II", 51, 8 + len(text) - 16) + text + body)
# Goe-MF .get: two frames (real or generated), and an old Dräger .get with its text header.
g = shared("P04P-1016.get")
put("fuzz_goe_get", "real2.get", g[:2048] if g else frame + frame)
put("fuzz_goe_get", "draeger.get", b"---Draeger EIT-Software---\r\nFrames: 1\r\n\r\n\r\n" + frame)
# MATLAB v5 .mat: hand-built 256x2 double, complex single and int16 matrices.
def element(tag, data):
    pad = (8 - len(data) % 8) % 8
    return struct.pack("<II", tag, len(data)) + data + b"\0" * pad
def matrix(name, cls, mi, fmt, re, im=None):
    flags = cls | (0x800 if im is not None else 0)
    body = element(6, struct.pack("<II", flags, 0)) + element(5, struct.pack("<ii", 256, len(re) // 256))
    body += element(1, name.encode()) + element(mi, struct.pack("<%d%s" % (len(re), fmt), *re))
    if im is not None:
        body += element(mi, struct.pack("<%d%s" % (len(im), fmt), *im))
    return element(14, body)
hdr = b"MATLAB 5.0 MAT-file, eitstream fuzz seed".ljust(116, b" ") + b"\0" * 8 + struct.pack("<H", 0x0100) + b"IM"
put("fuzz_mat", "double.mat", hdr + matrix("v", 6, 9, "d", [float(i) for i in range(512)]))
put("fuzz_mat", "complex.mat", hdr + matrix("v_rotate", 7, 7, "f", [float(i) for i in range(256)], [0.5] * 256))
put("fuzz_mat", "int16.mat", hdr + matrix("zc", 10, 3, "h", list(range(256))) + matrix("h", 6, 9, "d", [1.0] * 256))
# ... and as MATLAB -v7 writes them: each variable one zlib-compressed element; a cell of one.
import zlib
def compressed(elem):
    z = zlib.compress(elem)
    return struct.pack("<II", 15, len(z)) + z
cell = element(14, element(6, struct.pack("<II", 1, 0)) + element(5, struct.pack("<ii", 1, 1)) + element(1, b"c") + element(14, b""))
put("fuzz_mat", "compressed.mat", hdr + compressed(cell) + compressed(matrix("v", 6, 9, "d", [float(i) for i in range(512)])))
# Ingest framing, 8 values: two frames (f32, i16) around garbage, a wrong count, a false magic.
import zlib
def ingest(seq, stype, fmt, values):
    payload = struct.pack("<%d%s" % (len(values), fmt), *values)
    head = struct.pack("<4sBBHQqIHHI", b"EITF", 1, stype, 40, seq, 0, len(values), 0, 0,
                       zlib.crc32(payload))
    return head + struct.pack("<I", zlib.crc32(head)) + payload
f1 = ingest(1, 1, "f", [float(i) for i in range(8)])
f2 = ingest(2, 3, "h", list(range(-4, 4)))
put("fuzz_ingest", "mixed", chunks + b"boot\r\nEI" + f1 + b"EITFxx" + ingest(3, 1, "f", [1.0] * 7) + f2)
# recon's readers: .npy matrices, a .mat matrix named v, a 16-electrode disc in .msh 2.2.
put("fuzz_recon_npy", "f8.npy", npy("<f8", "(3, 4)", struct.pack("<12d", *range(12))))
put("fuzz_recon_npy", "i2.npy", npy(">i2", "(2, 3)", struct.pack(">6h", *range(6))))
put("fuzz_recon_mat", "v.mat", hdr + matrix("v", 6, 9, "d", [float(i) for i in range(512)]))
put("fuzz_recon_mat", "compressed.mat", hdr + compressed(cell) + compressed(matrix("v", 6, 9, "d", [float(i) for i in range(512)])))
import math
nodes = ["1 0 0 0"] + [f"{k + 2} {math.cos(2 * math.pi * k / 16):.12g} {math.sin(2 * math.pi * k / 16):.12g} 0"
                       for k in range(16)]
tris = [f"{k + 1} 2 2 1 1 1 {k + 2} {(k + 1) % 16 + 2}" for k in range(16)]
msh = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n17\n" + "\n".join(nodes) + \
      "\n$EndNodes\n$Elements\n16\n" + "\n".join(tris) + "\n$EndElements\n"
put("fuzz_recon_msh", "disc.msh", msh.encode())
# A batch of published images (sinks/image_batch.hpp): 3 headers of 4 values each, then payloads.
def image_header(seq):
    return struct.pack("<IHHBBH2IIQQqqqII32sq", 0x49544945, 1, 112, 1, 1, 0, 4, 1, 0, seq, 7,
                       1000 + seq, 2000, 0, 0, 4, b"seed", 3000)
heads = b"".join(image_header(s) for s in range(3))
put("fuzz_image_batch", "three", struct.pack("<H", len(heads)) + heads + struct.pack("<12f", *range(12)))
PY
# The HDF5 targets build their files from the input (tests/fuzz/fuzzed_hdf5.hpp): byte k alone
# picks layout k with every place valid (Model file: grid, voxels, mesh on nodes, on elements, gn;
# v7.3: v alone, or with 1 or 2 more variables; raw frames: real, complex, each read as /frames,
# /v_ref or /seq; image file: grid, voxel grid, mesh on nodes, on elements).
hdf5_layouts() {
  mkdir -p "$seeds/$1"
  for ((k = 0; k < $2; k++)); do printf "\\x0$k" >"$seeds/$1/valid$k"; done
}
hdf5_layouts fuzz_recon_model 5
hdf5_layouts fuzz_mat73 5
hdf5_layouts fuzz_hdf5_frames 6
hdf5_layouts fuzz_image_file 4

# The targets write each input to a file (libhdf5 needs a real path) in a folder of their own
# under this one, in memory where /dev/shm exists; removed at the end, also after a crash.
inputs=$(mktemp -d "$([ -d /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/eit-fuzz-run.XXXXXX")
trap 'rm -rf "$inputs"' EXIT

status=0
summary=()
for t in "${targets[@]}"; do
  bin="$build/fuzz/$t"
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  [ -d "$seeds/$t" ] && cp -n "$seeds/$t"/* "$corpus"/ 2>/dev/null || true
  log="$build/$t.log"
  echo "== $t: ${seconds}s, seed $([ "$seed" = 0 ] && echo random || echo "$seed")"
  rc=0
  # A forged size field must be refused by our checks before anything allocates what it claims
  # (libmatio mallocs what a .mat header says: docs/fuzzing.md). So any single allocation over
  # 256 MB, far beyond what a fuzz input of a few KB justifies, stops the run as a crash: ASan
  # aborts instead of returning NULL, and libFuzzer's malloc limit says which allocation it was.
  # Leaks inside third-party libraries we cannot fix are listed in scripts/lsan-suppressions.txt.
  LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
  ASAN_OPTIONS="allocator_may_return_null=0:max_allocation_size_mb=256${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  TMPDIR="$inputs" "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -print_final_stats=1 -seed="$seed" \
    -artifact_prefix="$build/$t-" "$corpus" >"$log" 2>&1 || rc=$?
  # libFuzzer's RSS watchdog can report out-of-memory and still exit 0: read the log too.
  if [ $rc -eq 0 ] && ! grep -qE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|^SUMMARY: ' "$log"; then
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
    summary+=("$t: $runs runs in ${seconds}s, coverage $cov edges, corpus $(ls "$corpus" | wc -l) inputs")
  else
    status=1
    summary+=("$t: FAILED (see $log and $build/$t-*)")
    tail -40 "$log"
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
