#!/usr/bin/env bash
# Session 13, run S4: (a) the tree (Q6_K padded by a kernel at load, the head's 4 rows a workgroup) against S3's
# (f6d4abd: padded on the host, 2 rows): logits and ids, load time, decode; the F16 head's rows (1B f16,
# BLUESHIFT_HEAD_ROWS=2 against 4); (b) the defaults beside llama.cpp's Vulkan backend (run_peer.sh, 512 + 128,
# medians of 5): Llama-3.2-1B q4_k_m and f16, Llama-3.1-8B q4_k_m.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/old && tar -C /tmp/old -xJf .dev/carry_old/bundle.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/old/bundle/
OLD=/tmp/old/bundle/run
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
mkdir -p /tmp/o
bench() {  # runner model label env...
  local run=$1 m=$2 lab=$3; shift 3
  env "$@" timeout 90 $run blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/bench-$m-$lab.json 2> /tmp/err.txt
  python3 - /tmp/o/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
k = d.get('gpu_ms_by_dispatch', {})
head = [v for n, v in k.items() if n.startswith('matvec')]
print(f"{sys.argv[2]} {sys.argv[3]:7s} ttft {d['ttft_ms']:6.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% | head {head[0] if head else 0:.3f} ms | load {d['load_s']:.2f} s")
PY
  grep -E "internal|rror" /tmp/err.txt | head -3
}
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
$OLD blueshift logits --model /tmp/m8q --tokens $P --out /tmp/a.npy >/dev/null 2>&1 || echo "old logits FAILED"
$BS blueshift logits --model /tmp/m8q --tokens $P --out /tmp/b.npy >/dev/null 2>/tmp/perr.txt || { echo "new logits FAILED"; head -3 /tmp/perr.txt; }
cmp -s /tmp/a.npy /tmp/b.npy && echo "m8q prefill logits (300 rows): new == old, bit for bit" || { echo "m8q prefill logits DIFFER"; python3 .dev/s13/cmp.py /tmp/b.npy /tmp/a.npy; }
for r in old new; do R=$BS; [ $r = old ] && R=$OLD
  $R blueshift generate --model /tmp/m8q --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 32 > /tmp/i-$r.txt 2>/dev/null; done
cmp -s /tmp/i-old.txt /tmp/i-new.txt && echo "m8q greedy ids (32 after 300): same" || { echo "m8q greedy ids DIFFER"; head -c 300 /tmp/i-old.txt; echo; head -c 300 /tmp/i-new.txt; echo; }
bench $BS m8q new; bench $OLD m8q old; bench $BS m8q new2; bench $OLD m8q old2; bench $BS m8q new3; bench $OLD m8q old3
stamp "8B A/B"; rm -rf /tmp/m8q
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
bench $BS m1f hr4; bench $BS m1f hr2 BLUESHIFT_HEAD_ROWS=2; bench $BS m1f hr4-2; bench $BS m1f hr2-2 BLUESHIFT_HEAD_ROWS=2
rm -rf /tmp/m1f
stamp "1B f16 head"
tar -C /tmp -cJf $OUT/s4.tar.xz o
mkdir -p /tmp/peer-out
timeout 200 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "1B peer"
timeout $(( 560 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B q4_k_m peer"
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
stamp "all done"
