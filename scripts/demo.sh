#!/usr/bin/env bash
# The main job, end to end on any Vulkan device (lavapipe when there is no GPU):
#   synthesize a small Llama-shaped model with random weights and a byte-level BPE tokenizer that
#   blueshift trains itself -> convert it to RDRR (Q8_0, zstd, SHA-256) -> verify the shards ->
#   stream generated tokens.
# Random weights produce gibberish: this shows the pipeline working, not a language model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)" --target blueshift
work=${DEMO_DIR:-build/demo}
rm -rf "$work" && mkdir -p "$work"
set -x
build/blueshift devices
build/blueshift synth --config scripts/configs/demo-llama.json "$work/hf" --seed 1 --tokenizer builtin
build/blueshift convert "$work/hf" "$work/model" --quant q8_0
build/blueshift verify "$work/model"
build/blueshift generate --model "$work/model" --prompt "Once upon a time" --max-tokens 48 --temperature 0.8 --seed 42
set +x
cat <<'MSG'

That was random weights, so the text is gibberish. With a real Hugging Face checkpoint directory
(config.json, *.safetensors, tokenizer.json), the same steps are:
  build/blueshift convert /path/to/hf-model /path/to/model --quant q4_k_m
  build/blueshift verify /path/to/model
  build/blueshift generate --model /path/to/model --prompt "Hello" --chat
  build/blueshift chat --model /path/to/model
MSG
