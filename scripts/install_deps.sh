#!/usr/bin/env bash
# Installs everything blueshift needs to build and test on Debian 12. Idempotent.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
  build-essential cmake ninja-build pkg-config git \
  libvulkan-dev glslc libshaderc-dev glslang-tools spirv-tools spirv-headers \
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools \
  libzstd-dev libssl-dev nlohmann-json3-dev libcli11-dev libpcre2-dev \
  libgtest-dev googletest libfmt-dev libicu-dev python3 python3-numpy tmux \
  libcpp-httplib-dev curl
# Node runs DOPPLER's own converter (npm doppler-gpu) in the tests/doppler oracle tests, which install
# the package themselves and skip without node/npm. Debian's nodejs is kept out of the way of a newer
# one already installed (e.g. NodeSource's, which conflicts with Debian's npm).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm \
    || echo "warning: nodejs/npm not installed; the DOPPLER oracle tests will skip"
fi
