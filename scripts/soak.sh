#!/usr/bin/env bash
# Soak test: `eitstream run` for N seconds (default 3600) at 1 kHz on the synthetic phantom,
# lossless PUSH to a recording consumer, and the same images PUB (--monitor) to a subscriber that
# connects and never reads (stalled) and one that reconnects every minute. Checks that the
# consumer recorded every frame (0 lost, every seq once, the series-end's count matches, run exits
# 0) and that run's RSS stays within ±5 MB of its value after the warm-up; prints a result table
# and exits 1 when a check fails, 77 when pyzmq is missing (ctest: skipped).
#   scripts/soak.sh [--seconds N] [--fps F] [--reconnect-every S] [--rss-tolerance-mb M]
#                   [--eitstream PATH] [--out DIR]
# Peers: scripts/soak_peers.py. Logs, the recording and rss.tsv go to DIR (default build/soak).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds=3600
fps=1000
period=60
rss_tol=5
eit="$here/../build/eitstream"
out="$here/../build/soak"
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --fps) fps="$2"; shift 2 ;;
    --reconnect-every) period="$2"; shift 2 ;;
    --rss-tolerance-mb) rss_tol="$2"; shift 2 ;;
    --eitstream) eit="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if ! python3 -c "import zmq" 2>/dev/null; then
  echo "SKIPPED: soak.sh needs python3 with pyzmq (scripts/install-deps.sh installs it)"
  exit 77
fi
[ -x "$eit" ] || { echo "soak.sh: no eitstream at $eit (build it, or pass --eitstream)" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out"/{recording.bin,record.json,reconnect.json,rss.tsv,run.out,run.err,peers.err}

# Two free loopback ports (bound and released here; the run binds them a moment later).
read -r p_push p_pub < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
push="tcp://127.0.0.1:$p_push"
pub="tcp://127.0.0.1:$p_pub"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

peers="$here/soak_peers.py"
python3 "$peers" record "$push" "$out/recording.bin" "$out/record.json" 2>>"$out/peers.err" &
rec_pid=$!; pids+=("$rec_pid")
python3 "$peers" stall "$pub" 2>>"$out/peers.err" &
stall_pid=$!; pids+=("$stall_pid")
python3 "$peers" reconnect "$pub" "$period" "$out/reconnect.json" 2>>"$out/peers.err" &
recon_pid=$!; pids+=("$recon_pid")

cmd=("$eit" run --source synthetic --fps "$fps" --backend cpu --push --policy lossless
     --endpoint "$push" --monitor "$pub" --duration "$seconds")
echo "soak: ${cmd[*]}"
start=$(date +%s)
"${cmd[@]}" >"$out/run.out" 2>"$out/run.err" &
run_pid=$!; pids+=("$run_pid")

# RSS of the run every 5 s (seconds since start, kB).
while kill -0 "$run_pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$run_pid/status" 2>/dev/null || true)
  [ -n "$rss" ] && echo "$(($(date +%s) - start)) $rss" >>"$out/rss.tsv"
  sleep 5
done
run_rc=0
wait "$run_pid" || run_rc=$?
# The consumer stops at the series-end; give it a little while if it never comes.
for _ in $(seq 1 100); do kill -0 "$rec_pid" 2>/dev/null || break; sleep 0.1; done
kill "$rec_pid" "$stall_pid" "$recon_pid" 2>/dev/null || true
wait "$rec_pid" "$stall_pid" "$recon_pid" 2>/dev/null || true
trap - EXIT

python3 - "$out" "$seconds" "$fps" "$rss_tol" "$run_rc" "$(($(date +%s) - start))" <<'PY'
import json, os, re, statistics, sys
out, seconds, fps, tol, run_rc, wall = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), \
    float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
def load(name):
    p = os.path.join(out, name)
    return json.load(open(p)) if os.path.exists(p) else {}
rec, recon = load("record.json"), load("reconnect.json")
text = open(os.path.join(out, "run.out")).read()
m = re.search(r"frames: in (\d+), reconstructed (\d+), lost before the sinks (\d+)", text)
frames_in, reconstructed, lost = (int(x) for x in m.groups()) if m else (-1, -1, -1)
m = re.search(r"sink zmq: sent (\d+), dropped (\d+)", text)
dropped = int(m.group(2)) if m else -1
mon = re.search(r"monitor publisher: (.*)", text)
rss = [tuple(map(int, l.split())) for l in open(os.path.join(out, "rss.tsv")) if l.strip()]
warm = max(10.0, min(120.0, seconds / 10))
after = [(t, kb) for t, kb in rss if t >= warm]
rows, ok_all = [], True
def check(name, value, limit, ok):
    global ok_all
    ok_all &= bool(ok)
    rows.append((name, str(value), limit, "ok" if ok else "FAIL"))
check("run exit status", run_rc, "0", run_rc == 0)
check("frames in (source, run)", frames_in, f"≈ {seconds:.0f} s × {fps:.0f}/s",
      frames_in > 0.95 * seconds * fps)
check("frames lost before the sinks (run summary)", lost, "0", lost == 0)
check("frames the PUSH sink dropped (run summary)", dropped, "0", dropped == 0)
got = rec.get("images", -1)
check("images recorded by the PULL consumer", got, "= frames in", got == frames_in)
check("frames lost (in − recorded)", frames_in - got if got >= 0 else "?", "0", got == frames_in)
check("seq gaps in the recording", rec.get("seq_gaps", "?"), "0", rec.get("seq_gaps") == 0)
check("recording read back: every seq once", rec.get("file_records", "?"), "= recorded",
      rec.get("file_complete") and rec.get("file_records") == got)
check("series-end frames_sent", rec.get("frames_sent", "?"), "= recorded",
      rec.get("series_end") and rec.get("frames_sent") == got)
if after:
    base = after[0][1]
    lo, hi = min(kb for _, kb in after), max(kb for _, kb in after)
    dev = max(hi - base, base - lo) / 1024
    check(f"RSS after {warm:.0f} s warm-up: base / min / max (MB)",
          f"{base/1024:.1f} / {lo/1024:.1f} / {hi/1024:.1f}", f"± {tol:g} MB", dev <= tol)
    rows.append(("RSS first sample / last sample (MB)",
                 f"{rss[0][1]/1024:.1f} / {rss[-1][1]/1024:.1f}", f"{len(rss)} samples", ""))
else:
    check("RSS samples after the warm-up", 0, "> 0", False)
periods = [p for p in recon.get("periods", []) if p["full"]]
if periods:
    imgs = [p["images"] for p in periods]
    rows.append(("reconnecting SUB: full periods", str(len(periods)),
                 f"{recon['period_s']:g} s each", ""))
    check("  images per period: min / median", f"{min(imgs)} / {statistics.median(imgs):.0f}",
          "> 0 in each", min(imgs) > 0)
    rows.append(("  frames missed inside periods", str(sum(p["missed_inside"] for p in periods)),
                 "(live PUB: may drop)", ""))
else:
    check("reconnecting SUB: full periods", 0, "> 0", False)
rows.append(("wall time (s)", str(wall), "", ""))
w = [max(len(r[i]) for r in rows) for i in range(4)]
print("\nsoak result")
for r in rows:
    print("  " + "  ".join(r[i].ljust(w[i]) for i in range(4)).rstrip())
print("  monitor PUB (a stalled and a reconnecting SUB): " + (mon.group(1) if mon else "?"))
print("soak: PASS" if ok_all else "soak: FAIL")
sys.exit(0 if ok_all else 1)
PY
