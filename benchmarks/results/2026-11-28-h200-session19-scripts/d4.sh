#!/usr/bin/env bash
# Session 19, call 4. (1) The 8B f16's read-ahead workgroups (BLUESHIFT_PREFETCH_WG 264 / 528 against the SM count,
# at the 4 MiB default, and 8 MiB at 264), two rounds (predicted: within +-1%: D2's 1B rows at 8 MiB went 766 -> 820
# with 264, so a wider read may finish inside the tail). (2) The final table: run_peer.sh, 1B and 8B, q4_k_m and f16,
# beside llama.cpp's Vulkan backend, at this tree's defaults (the read-ahead on for the 8B f16). HF parity first.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/peer-out
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
row() { local tag=$1 m=$2 pt=$3; shift 3; env "$@" timeout 90 $BS blueshift bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% dispatches {d[\"dispatches_per_token\"]}')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models8
for i in 1 2; do
  row m8f-def-$i /tmp/m8f 512
  row m8f-off-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_KB=0
  row m8f-wg264-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_WG=264
  row m8f-wg528-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_WG=528
  row m8f-kb8192-wg264-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_WG=264 BLUESHIFT_PREFETCH_KB=8192
done
rm -rf /tmp/m8f
stamp sweep
tar -C /tmp -cJf $OUT/d4.tar.xz o
timeout 150 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "1B peer"
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/d4.tar.xz o
timeout $(( 580 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B peer"
cat /tmp/peer-out/peer.md
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/d4.tar.xz o
