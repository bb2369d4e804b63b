"""Shared fixtures: the eitstream binary (EITSTREAM_BIN, set by ctest) and ../shared/data."""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def eitstream_bin():
    candidates = [os.environ.get("EITSTREAM_BIN"), str(ROOT / "build" / "eitstream"),
                  shutil.which("eitstream")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    pytest.skip("eitstream binary not found (set EITSTREAM_BIN or build ./build/eitstream)")


@pytest.fixture(scope="session")
def shared_data():
    # ../shared/data beside the checkout (as the C++ tests), or beside the worktrees' parent.
    candidates = [os.environ.get("EIT_SHARED_DATA"), ROOT.parent / "shared" / "data",
                  ROOT.parent.parent / "shared" / "data"]
    for c in candidates:
        if c and (pathlib.Path(c) / "recordings").is_dir():
            return pathlib.Path(c)
    pytest.skip(f"shared data not found (tried {[str(c) for c in candidates if c]}; "
                "set EIT_SHARED_DATA)")


def run(*args, check=True, timeout=120):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({p.returncode}):\n"
                             f"{p.stdout}\n{p.stderr}")
    return p
