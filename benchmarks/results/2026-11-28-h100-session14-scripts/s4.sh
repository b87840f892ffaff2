#!/usr/bin/env bash
# Session 14, run S4 (final tree): (a) decode with the head's norm apart: greedy ids and decode-path logits
# (--step) against S2's build (the folded norm; .dev/carry_old), HF parity of llama-tiny and phi3-tiny;
# (b) the defaults beside llama.cpp's Vulkan backend (run_peer.sh, 512 + 128, medians of 5): 1B q4_k_m and f16,
# 8B q4_k_m and f16.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/old && tar -C /tmp/old -xJf .dev/carry_old/bundle.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/old/bundle/
OLD=/tmp/old/bundle/run
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
S=$(python3 -c "import random; random.seed(9); print(','.join(str(random.randrange(128000)) for _ in range(64)))")
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
for m in m1q m1f; do
  BLUESHIFT_SPLITK_FUSED=0 $OLD blueshift logits --model /tmp/$m --tokens $S --step --out /tmp/a.npy >/dev/null 2>&1 || echo "old logits FAILED"
  $BS blueshift logits --model /tmp/$m --tokens $S --step --out /tmp/b.npy >/dev/null 2>/tmp/perr.txt || { echo "new logits FAILED"; head -3 /tmp/perr.txt; }
  echo -n "$m decode-path logits (64 steps), head norm apart vs folded: "; python3 .dev/s14/cmp.py /tmp/b.npy /tmp/a.npy
  for r in old new; do R=$BS; [ $r = old ] && R="env BLUESHIFT_SPLITK_FUSED=0 $OLD"
    $R blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 64 > /tmp/i-$r.txt 2>/dev/null; done
  cmp -s /tmp/i-old.txt /tmp/i-new.txt && echo "$m greedy ids (64 after 300): same" || { echo "$m greedy ids DIFFER"; head -c 400 /tmp/i-old.txt; echo; head -c 400 /tmp/i-new.txt; echo; }
done
rm -rf /tmp/m1q /tmp/m1f /tmp/a.npy /tmp/b.npy
echo "== HF parity (this tree)"
python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -8
stamp "checks"
mkdir -p /tmp/peer-out
timeout 200 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "1B peer"
cat /tmp/peer-out/peer.md; tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
timeout $(( 560 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B peer"
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
stamp "all done"
