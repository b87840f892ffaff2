#!/bin/sh
# Installs DOPPLER's npm package, doppler-gpu (pinned), into PREFIX for the oracle tests: its converter
# runs headless under Node, no GPU. Run once by the doppler.install ctest fixture; a no-op when the
# version is already there. Exits 0 when node, npm or the registry is missing: the tests then skip,
# saying why.
#   tests/doppler/install_doppler.sh PREFIX     (the build's default: build/_npm)
set -u
prefix=${1:?usage: install_doppler.sh PREFIX}
version=0.5.1
pkg="$prefix/node_modules/doppler-gpu/package.json"
if [ -f "$pkg" ] && grep -q "\"version\": \"$version\"" "$pkg"; then
  echo "doppler-gpu $version is installed in $prefix"
  exit 0
fi
for tool in node npm; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "doppler-gpu not installed: $tool is not on PATH (the DOPPLER oracle tests will skip)"
    exit 0
  fi
done
# Its optional dependencies are WebGPU bindings (about 80 MB) the converter does not use; no install
# scripts are needed either.
if timeout 300 npm install --prefix "$prefix" --no-audit --no-fund --omit=optional --ignore-scripts \
     "doppler-gpu@$version"; then
  echo "doppler-gpu $version installed in $prefix"
else
  echo "doppler-gpu not installed: npm install failed (registry unreachable?); the DOPPLER oracle tests will skip"
fi
exit 0
