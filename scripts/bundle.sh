#!/usr/bin/env bash
# Makes a portable bundle of blueshift for a machine without the build dependencies:
#   scripts/bundle.sh [BUILD_DIR] [OUT_DIR]   -> OUT_DIR/bin/<executables>, OUT_DIR/lib/<shared libs>, OUT_DIR/run
# OUT_DIR/run <program> [args] runs a bundled program with the bundled libraries. The Vulkan loader
# (libvulkan.so.1) is bundled too; the GPU driver (ICD) must come from the target machine.
set -euo pipefail
build=${1:-build}
out=${2:-bundle}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
progs=("$build/blueshift")
for p in "$build"/benchmarks/bs_*; do [ -x "$p" ] && progs+=("$p"); done
for p in "${progs[@]}"; do
  cp "$p" "$out/bin/"
  strip --strip-debug "$out/bin/$(basename "$p")"
  # Every shared library except the C runtime, which the target has and must not be replaced.
  ldd "$p" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*) ;;
      *) cp -L -n "$lib" "$out/lib/" ;;
    esac
  done
done
cat > "$out/run" <<'EOS'
#!/usr/bin/env bash
here=$(cd "$(dirname "$0")" && pwd)
prog=$1; shift
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/bin/$prog" "$@"
EOS
chmod +x "$out/run"
# What it was built from: the commit, and a hash of the uncommitted changes where there were any (a patched tree's
# bundle says so; session 41 found a carried bundle that was not the tree its notes named).
{
  git rev-parse --short HEAD 2>/dev/null || echo "not a git checkout"
  git diff --quiet HEAD 2>/dev/null || echo "with uncommitted changes $(git diff HEAD | sha256sum | cut -c1-12)"
} > "$out/BUILD"
du -sh "$out"
