#!/usr/bin/env bash
# CPU use of `eitstream run` while it streams: utime+stime from /proc/<pid>/stat over a window,
# after start-up. Prints the percentage of one core. (SIGTERM to stop it: a background job of a
# non-interactive shell starts with SIGINT ignored.)
#   scripts/idle_cpu.sh [EITSTREAM] [SECONDS] [run options…]
#   scripts/idle_cpu.sh build/eitstream 10 --stages pipelined --latency-mode balanced
set -euo pipefail
bin=${1:-build/eitstream}
secs=${2:-10}
shift $(( $# >= 2 ? 2 : $# ))
sock=/tmp/eit-idle-$$.sock
"$bin" run --quiet --endpoint "ipc://$sock" "$@" >/dev/null 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$sock"' EXIT
sleep 3  # start-up (model, pool, threads) excluded
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
a=$(ticks)
t0=$(date +%s%N)
sleep "$secs"
b=$(ticks)
t1=$(date +%s%N)
awk -v d=$((b - a)) -v hz="$(getconf CLK_TCK)" -v ns=$((t1 - t0)) \
  'BEGIN { printf "%.2f %% of one core (%d ticks over %.1f s)\n", 100 * d / hz / (ns / 1e9), d, ns / 1e9 }'
