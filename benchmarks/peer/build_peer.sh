#!/usr/bin/env bash
# Builds llama_bench_peer (the llama.cpp side of benchmarks/peer/run_peer.sh) with the system gcc.
#   benchmarks/peer/build_peer.sh LIB_DIR NLC_DIR [OUT [RPATH]]
# LIB_DIR: the prebuilt libraries, npm @node-llama-cpp/linux-x64-vulkan's package/bins/linux-x64-vulkan
#          (libllama, libggml*, the Vulkan and CPU backends). It ships no headers.
# NLC_DIR: the npm node-llama-cpp package of the same version (its package/ folder): it bundles the
#          llama.cpp sources of that release as llama/gitRelease.bundle, where llama.h and ggml's
#          headers are read from. Nothing is declared by hand.
# RPATH: where the program looks for the libraries at run time (default LIB_DIR; '$ORIGIN' = beside it).
# Fetch both (on a machine with the npm registry):
#   npm pack @node-llama-cpp/linux-x64-vulkan@3.22.1 node-llama-cpp@3.22.1  # then tar xzf each
set -euo pipefail
lib=$(cd "${1:?LIB_DIR}" && pwd)
nlc=$(cd "${2:?NLC_DIR}" && pwd)
out=${3:-build/llama_bench_peer}
rpath=${4:-$lib}
here=$(cd "$(dirname "$0")" && pwd)
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
want=$(cat "$nlc/llama/binariesGithubRelease.json" 2>/dev/null | tr -d ' \n')
have=$(cat "$lib/_nlcBuildMetadata.json" 2>/dev/null | tr -d ' \n')
case "$have" in *"${want#*release\":\"}"*) ;; *) echo "warning: headers from $want, libraries built from $have" >&2 ;; esac
git -C "$inc" init -q
git -C "$inc" fetch -q "$nlc/llama/gitRelease.bundle"
git -C "$inc" archive FETCH_HEAD include ggml/include | tar x -C "$inc"
mkdir -p "$(dirname "$out")"
gcc -O2 -std=c11 -Wall -Wextra -Werror -I"$inc/include" -I"$inc/ggml/include" "$here/llama_bench_peer.c" \
  "$lib"/libllama.vulkan.*.so "$lib"/libggml.vulkan.*.so "$lib/libggml-base.so" \
  -Wl,-rpath,"$rpath" -o "$out"
echo "$out"
