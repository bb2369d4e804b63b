#!/usr/bin/env bash
# Installs every Debian and Python package eitstream needs to build, test and benchmark.
# Idempotent: safe to run again. Run as root (or with sudo) on Debian 12 / Ubuntu 24.04.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
debs=(
  build-essential cmake pkg-config ninja-build clang libclang-rt-dev
  libboost-dev libzmq3-dev cppzmq-dev libeigen3-dev libfmt-dev doctest-dev
  libhdf5-dev libcli11-dev libmatio-dev libgmsh-dev nlohmann-json3-dev
  libsuitesparse-dev libssl-dev libsodium-dev
  # CHOLMOD's supernodal factorisation (3-D forward models) runs on BLAS/LAPACK: with Debian's
  # reference libblas3 the forward of 220,000 tetrahedra takes 5-6 s, with OpenBLAS 1.4 s.
  # Installing it makes it the libblas.so.3/liblapack.so.3 alternative (priority 90 over 10).
  # The serial build: on 2 cores the pthread build was no faster, and 5× slower (7 s) while other
  # processes held the cores (docs/benchmarks.md, "OpenBLAS"). Runtime package only: we link
  # libblas.so.3, not OpenBLAS's own API.
  libopenblas0-serial
  openssl  # the TLS ingest test makes its certificates with it
  nats-server libnats-dev
  chromium chromium-driver
  python3-numpy
  librsvg2-bin
  ccache
  hyperfine  # start-up timing (docs/benchmarks.md, "Start-up")
)
missing=()
for p in "${debs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Python side: reference numbers (pyEIT, eitprocessing), the Python package's tests (pytest), the
# live view's browser test (selenium), NATS clients and the benchmarks' plots.
# Optional: tests that need them skip with a message when the registry cannot be reached.
if ! python3 -c "import pyeit, zmq, numpy, scipy, matplotlib, h5py, eitprocessing, pytest, selenium, nats" >/dev/null 2>&1; then
  python3 -m pip install -q pyeit pyzmq numpy scipy matplotlib h5py eitprocessing pytest selenium nats-py ||
    echo "install-deps: pip packages not installed (no registry?); pyEIT cross-checks will skip"
fi
