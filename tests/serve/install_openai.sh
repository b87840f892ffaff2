#!/bin/sh
# Installs OpenAI's npm client (`openai`, pinned) into PREFIX for serve's Node client test; a no-op when
# that version is there. Exits 0 when node, npm or the registry is missing: the test then skips, saying why.
#   tests/serve/install_openai.sh PREFIX     (test_serve uses build/_npm)
set -u
prefix=${1:?usage: install_openai.sh PREFIX}
version=4.104.0
pkg="$prefix/node_modules/openai/package.json"
if [ -f "$pkg" ] && grep -q "\"version\": \"$version\"" "$pkg"; then
  echo "openai $version is installed in $prefix"
  exit 0
fi
for tool in node npm; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "openai not installed: $tool is not on PATH"
    exit 0
  fi
done
if timeout 300 npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts "openai@$version"; then
  echo "openai $version installed in $prefix"
else
  echo "openai not installed: npm install failed (registry unreachable?)"
fi
exit 0
