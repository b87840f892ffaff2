#!/usr/bin/env bash
# Packs llama.cpp's side of benchmarks/peer/run_peer.sh for a machine without npm or a compiler:
#   benchmarks/peer/pack_peer.sh LIB_DIR NLC_DIR OUT_DIR   -> OUT_DIR/ (llama_bench_peer + the libraries it
#                                                             loads), OUT_DIR.tar.xz (to carry)
# LIB_DIR and NLC_DIR as for build_peer.sh. The program finds its libraries next to itself ($ORIGIN);
# libvulkan.so.1 comes from the machine or the blueshift bundle's lib/ (run_peer.sh puts it on the path).
set -euo pipefail
lib=$(cd "${1:?LIB_DIR}" && pwd)
nlc=${2:?NLC_DIR}
out=${3:?OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
# libllama, the ggml registry and base, the Vulkan backend and every CPU variant (ggml loads the best one
# for the host CPU; llama.cpp keeps the token embedding lookup on the CPU). Not the Node addon.
cp "$lib"/libllama.vulkan.*.so "$lib"/libggml.vulkan.*.so "$lib"/libggml-base.so "$lib"/libggml-vulkan.so \
   "$lib"/libggml-cpu-*.so "$lib"/_nlcBuildMetadata.json "$out/"
"$here/build_peer.sh" "$out" "$nlc" "$out/llama_bench_peer" '$ORIGIN' > /dev/null
tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
echo "$out: $(du -sh "$out" | cut -f1) ($(du -sh "$out.tar.xz" | cut -f1) as $out.tar.xz)"
