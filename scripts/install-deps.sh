#!/usr/bin/env bash
# Installs every Debian and Python package eitstream needs to build, test and benchmark.
# Idempotent: safe to run again. Run as root (or with sudo) on Debian 12 / Ubuntu 24.04.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
debs=(
  build-essential cmake pkg-config ninja-build clang
  libboost-dev libzmq3-dev cppzmq-dev libeigen3-dev libfmt-dev doctest-dev
  libhdf5-dev libcli11-dev libmatio-dev libgmsh-dev nlohmann-json3-dev
  python3-numpy
  librsvg2-bin
)
missing=()
for p in "${debs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Python side: reference numbers (pyEIT), the example subscriber and the benchmarks' plots.
# Optional: tests that need them skip with a message when the registry cannot be reached.
if ! python3 -c "import pyeit, zmq, numpy, scipy, matplotlib, h5py" >/dev/null 2>&1; then
  python3 -m pip install -q pyeit pyzmq numpy scipy matplotlib h5py ||
    echo "install-deps: pip packages not installed (no registry?); pyEIT cross-checks will skip"
fi
