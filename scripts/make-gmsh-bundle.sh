#!/usr/bin/env bash
# Packs this machine's Gmsh (Debian 12's libgmsh 4.8, gmsh.h) and every library it loads, except
# glibc, libstdc++ and libgcc_s (any Linux with a C++ compiler has them), into ONE file for the GPU
# machine, which has no Gmsh and no package registry:
#   scripts/make-gmsh-bundle.sh [DIR]        (default DIR = .gmsh-bundle, git-ignored)
# writes DIR/gmsh-libs.tar.xz (include/gmsh.h, lib/*.so*; ~29 MB) and DIR/env.sh. There, from the
# repository root, before configuring the build (so CMake finds Gmsh and builds libeit_gmsh.so):
#   source .gmsh-bundle/env.sh
# which unpacks the file once into $GMSH_BUNDLE_DIR (default /tmp/gmsh-bundle) and sets
# CMAKE_PREFIX_PATH and LD_LIBRARY_PATH. Libraries that machine already has (same soname in
# `ldconfig -p`) are taken from the machine, not from the bundle: they are newer there, and the
# process may load them anyway for other reasons (zlib, libgomp); GMSH_BUNDLE_ALL=1 keeps every
# bundled copy (to check here that the bundle alone is enough).
set -euo pipefail
dir=${1:-.gmsh-bundle}
[ -f /usr/include/gmsh.h ] && [ -e /usr/lib/x86_64-linux-gnu/libgmsh.so ] ||
  { echo "no Gmsh here (libgmsh-dev)" >&2; exit 1; }
lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libgmsh.so)
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/include" "$stage/lib" "$dir"
cp /usr/include/gmsh.h "$stage/include/"
cp -L "$lib" "$stage/lib/$soname"
ln -s "$soname" "$stage/lib/libgmsh.so"
core='^(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s|linux-vdso)\.so'
ldd "$lib" | awk '/=>/ {print $1, $3}' | while read -r so path; do
  [[ $so =~ $core ]] || cp -L "$path" "$stage/lib/$so"
done
tar -C "$stage" -cf - include lib | xz -9e -T2 >"$dir/gmsh-libs.tar.xz"
cat >"$dir/env.sh" <<'ENV'
# Source from the repository root (made by scripts/make-gmsh-bundle.sh): Gmsh from the bundle.
_gb=${GMSH_BUNDLE_DIR:-/tmp/gmsh-bundle}
if [ ! -f "$_gb/.unpacked" ]; then
  mkdir -p "$_gb" && tar -C "$_gb" -xJf "$PWD/.gmsh-bundle/gmsh-libs.tar.xz" &&
    if [ "${GMSH_BUNDLE_ALL:-0}" != 1 ] && command -v ldconfig >/dev/null; then
      _have=$(ldconfig -p | awk '/x86-64/ {print $1}')
      for _f in "$_gb"/lib/*.so.*; do
        _n=$(basename "$_f")
        case $_n in libgmsh.so*) continue ;; esac
        if grep -qxF "$_n" <<<"$_have"; then rm -f "$_f"; fi
      done
    fi && touch "$_gb/.unpacked"
fi
export CMAKE_PREFIX_PATH="$_gb${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export LD_LIBRARY_PATH="$_gb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "gmsh bundle: $(ls "$_gb"/lib | wc -l) libraries in $_gb/lib"
ENV
ls -l "$dir/gmsh-libs.tar.xz"
echo "$(ls "$stage/lib" | wc -l) files in lib/, $(du -sh "$stage" | cut -f1) unpacked"
