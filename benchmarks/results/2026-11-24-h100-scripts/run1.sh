#!/usr/bin/env bash
# Session 2026-11-24, device run 1: llama.cpp's Vulkan backend beside blueshift in one command
# (benchmarks/peer/run_peer.sh: 1B q4_k_m + f16, 8B q4_k_m; 512 + 128 tokens, medians of 5), then the
# loader's throughput on a 1B q4_k_m bundle hashed with SHA-256 vs BLAKE3 (verify --loader, 1..16 threads).
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run1.txt
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
grep -m1 'model name' /proc/cpuinfo; grep -o -m1 -w 'avx512f\|sha_ni' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
t0=$(date +%s)
benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/carry/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/po
echo "peer 1B: $(( $(date +%s) - t0 )) s"
# BLAKE3 vs SHA-256 loading, the same 1B q4_k_m weights
w=/tmp/bl; mkdir -p $w
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json $w/hf --seed 1 >/dev/null
for h in sha256 blake3; do $BS blueshift convert $w/hf $w/$h --quant q4_k_m --hash $h >/dev/null; done
rm -rf $w/hf
for th in 1 4 16; do for h in sha256 blake3; do for r in 1 2 3; do
  echo "loader $h threads=$th rep $r: $($BS blueshift verify --loader --threads $th $w/$h 2>/dev/null | tail -1)"
done; done; done
for h in sha256 blake3; do
  $BS blueshift bench --model $w/$h --prompt-tokens 64 --gen-tokens 16 --reps 1 --json > $OUT/load-$h.json 2>/dev/null &&
   python3 -c "import json;d=json.load(open('$OUT/load-$h.json'));print('$h full load_s', d['load_s'])"
done
$BS bs_hash_bench 2>&1 | tail -12
echo "total: $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/carry/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m --out /tmp/po
echo "peer 8B: $(( $(date +%s) - t1 )) s"
cat /tmp/po/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz po
} 2>&1 | tee $L
