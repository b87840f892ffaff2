#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite on lavapipe (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
# lavapipe is the CPU Vulkan driver; on a machine with a GPU, BLUESHIFT_DEVICE picks another adapter.
export BLUESHIFT_DEVICE="${BLUESHIFT_DEVICE:-llvmpipe}"
ctest --test-dir build --output-on-failure -j"$(nproc)"
