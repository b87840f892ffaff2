#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite on lavapipe (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# ccache, where installed, makes a rebuild of an unchanged tree (a second clone, CI after a session) quick.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}"
cmake --build build -j"$(nproc)"
# lavapipe is the CPU Vulkan driver; on a machine with a GPU, BLUESHIFT_DEVICE picks another adapter.
export BLUESHIFT_DEVICE="${BLUESHIFT_DEVICE:-llvmpipe}"
ctest --test-dir build --output-on-failure -j"$(nproc)"
