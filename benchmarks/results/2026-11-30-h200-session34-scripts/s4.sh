#!/usr/bin/env bash
# S4 (session 34): (a) embed_row's Q6_K parts (d82a83f, .dev/carry) against d4412bc ($OLD,
# .dev/carry2), 1B and 8B q4_k_m, twice each, alternating; greedy ids of 64 tokens with the o fold off
# (BLUESHIFT_PERSISTENT_FOLD_O=0: bitwise reproducible) old against new. Predicted: the sampler -3 us (1B) / -6 us (8B)
# a token, decode +0.4% / +0.2%. (b) The final table: run_peer.sh (llama.cpp's Vulkan backend in the same command,
# 512 + 128, medians of 5). Carry .gl, .dev/carry, .dev/carry2 and .dev/peer.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/s4
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/s4/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  for i in 1 2; do
    ab_bench $o old$i $OLD /tmp/m/m 512 128 5
    ab_bench $o new$i $BS /tmp/m/m 512 128 5
  done
  python3 - $o <<'PY'
import json, sys
for n in ("old1", "new1", "old2", "new2"):
    d = json.load(open(f"{sys.argv[1]}/{n}.json"))
    s = d["gpu_ms_by_dispatch"].get("sample", 0) * 1000
    print(f"  {n:5s} {d['decode_tok_s']:8.1f} tok/s, p50 {d['decode_ms_per_token_p50']:.4f} ms, sample {s:.1f} us")
PY
  for v in old new; do
    r=$BS; [ $v = old ] && r=$OLD
    BLUESHIFT_PERSISTENT_FOLD_O=0 $r blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
      --max-tokens 64 --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
  done
  cmp -s $o/ids-old.txt $o/ids-new.txt && echo "  greedy ids old / new: same ($(wc -w < $o/ids-new.txt) tokens)" || echo "  greedy ids old / new: DIFFER"
  stamp "$cfg A/B"
  tar -C /tmp -cJf $OUT/s4.tar.xz s4
done
rm -rf /tmp/m
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 260 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/s4/
  tar -C /tmp -cJf $OUT/s4.tar.xz s4
done
cat /tmp/peer-out/peer.md
