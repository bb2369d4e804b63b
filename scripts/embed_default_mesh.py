#!/usr/bin/env python3
"""Writes recon/src/default_circle_mesh_data.cpp: the mesh our Gmsh generator makes for the
default options (unit circle, h0 0.1, 16 point electrodes), stored in the binary so that
`eitstream model build` of the default model and the built-in model of `run` need not load Gmsh
(0.5 s of library loading). tests/recon/test_default_circle_mesh.cpp checks the stored mesh
against the generator wherever Gmsh is available; rerun this script when that test says they
differ (e.g. after a Gmsh upgrade).

Usage: scripts/embed_default_mesh.py BUILD_DIR/eitstream [OUTPUT.cpp]
It runs `EIT_MESH_NO_EMBEDDED=1 eitstream model build --algorithm jac` (Gmsh generates the mesh) into a temporary JAC model and reads
/geometry (nodes, elements, electrode_nodes) with h5py.
"""
import os
import subprocess
import sys
import tempfile

import h5py


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    exe = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "recon", "src",
        "default_circle_mesh_data.cpp")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "m.h5")
        env = dict(os.environ, EIT_MESH_NO_EMBEDDED="1")  # make Gmsh generate it
        subprocess.run([exe, "model", "build", "--algorithm", "jac", "--mesh", "circle",
                        "-o", model], check=True, env=env, stdout=subprocess.DEVNULL)
        with h5py.File(model, "r") as f:
            nodes = f["/geometry/nodes"][()]
            elements = f["/geometry/elements"][()]
            electrodes = f["/geometry/electrode_nodes"][()]
    lines = [
        "// Generated data, not code: the mesh our Gmsh generator makes for the default MeshOptions (unit",
        "// circle, h0 0.1, 16 point electrodes), written by scripts/embed_default_mesh.py. Do not edit or",
        "// split it (it is long because it is data; STYLE.md's ~400 lines are for code). To regenerate,",
        "// in a build with Gmsh: scripts/embed_default_mesh.py build/eitstream (needs h5py).",
        "// tests/recon/test_default_circle_mesh.cpp checks it against the generator.",
        '#include "default_circle_mesh_data.hpp"',
        "",
        "namespace eit::recon::detail {",
        "",
        f"const double kDefaultMeshNodes[{len(nodes)}][2] = {{",
    ]
    lines += [f"    {{{x!r}, {y!r}}}," for x, y in nodes.tolist()]
    lines += ["};", "", f"const int kDefaultMeshElements[{len(elements)}][3] = {{"]
    lines += ["    {%d, %d, %d}," % tuple(e) for e in elements.tolist()]
    lines += ["};", "", f"const int kDefaultMeshElectrodes[{len(electrodes)}] = {{"]
    lines += ["    " + ", ".join(str(int(e)) for e in electrodes) + ","]
    lines += ["};", "", f"const int kDefaultMeshNodeCount = {len(nodes)};",
              f"const int kDefaultMeshElementCount = {len(elements)};",
              f"const int kDefaultMeshElectrodeCount = {len(electrodes)};", "",
              "}  // namespace eit::recon::detail", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print(f"{out}: {len(nodes)} nodes, {len(elements)} triangles, {len(electrodes)} electrodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
