#!/usr/bin/env bash
# Session 2026-11-24, device run 5: run 4's generate for the two Qwen 3 rerankers (vocabulary 151,669; run 4
# gave them Gemma token ids), and bench on the Qwen 3 reranker q4k bundle (Q4_K rows of 1024: no padding).
set -uo pipefail
. benchmarks/lease_setup.sh
tar -C /tmp -xJf .dev/m24/manifests.tar.xz
L=$OUT/run5.txt
{
mkdir -p /tmp/m5
for n in qwen-3-reranker-0-6b-f16-af32 qwen-3-reranker-0-6b-q4k-ehf16-af32; do
  b=/tmp/m5/$n
  $BS blueshift synth --like /tmp/doppler-manifests/$n/manifest.json $b --seed 1 2>&1 | tail -1
  $BS blueshift verify $b | tail -1
  echo "generate: $($BS blueshift generate --model $b --prompt-tokens 2,106,1645,2000 --max-tokens 8 --temperature 0 --ignore-eos 2>&1 | tail -2 | tr '\n' ' ')"
done
} 2>&1 | tee $L
