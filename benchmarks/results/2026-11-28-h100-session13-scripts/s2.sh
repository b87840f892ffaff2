#!/usr/bin/env bash
# Session 13, run S2: Q6_K blocks padded to 224 bytes on the GPU (16-byte aligned; the prefill GEMM's chunks as
# uvec4 loads, in pairs). Old bundle (90b1653, .dev/carry_old) against the new one: test_coopmat / test_kernels
# on the H100, logits and greedy ids bit for bit, TTFT and decode alternating, prefill profiles (1B and 8B
# q4_k_m), the Q6_K matvec alone (bs_gemv_bench).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/old && tar -C /tmp/old -xJf .dev/carry_old/bundle.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/old/bundle/
OLD=/tmp/old/bundle/run
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
mkdir -p /tmp/o
bench() {  # runner model label
  local run=$1 m=$2 lab=$3
  timeout 90 $run blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/bench-$m-$lab.json 2> /tmp/err.txt
  python3 - /tmp/o/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
k = d.get('gpu_ms_by_dispatch', {})
head = [v for n, v in k.items() if n.startswith('matvec q6k')]
print(f"{sys.argv[2]} {sys.argv[3]:5s} ttft {d['ttft_ms']:6.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% | persistent {k.get('decode_persistent', 0):.3f} head {head[0] if head else 0:.3f} ms | vram {d['vram_bytes']/1e9:.3f} GB | load {d['load_s']:.2f} s")
PY
  grep -E "internal|rror" /tmp/err.txt | head -3
}
same() {  # model
  local m=$1
  $OLD blueshift logits --model /tmp/$m --tokens $P --out /tmp/a.npy >/dev/null 2>&1 || echo "old logits FAILED"
  $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/b.npy >/dev/null 2>/tmp/perr.txt || { echo "new logits FAILED"; head -3 /tmp/perr.txt; }
  cmp -s /tmp/a.npy /tmp/b.npy && echo "$m prefill logits (300 rows): new == old, bit for bit" || { echo "$m prefill logits DIFFER"; python3 .dev/s13/cmp.py /tmp/b.npy /tmp/a.npy; }
  rm -f /tmp/a.npy /tmp/b.npy
  $OLD blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 32 > /tmp/ia.txt 2>/dev/null
  $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 32 > /tmp/ib.txt 2>/dev/null
  cmp -s /tmp/ia.txt /tmp/ib.txt && echo "$m greedy ids (32 after 300): same" || { echo "$m greedy ids DIFFER"; head -c 300 /tmp/ia.txt; echo; head -c 300 /tmp/ib.txt; echo; }
}
timeout 120 $BS test_coopmat 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected|actual" | head -12
timeout 120 $BS test_kernels --gtest_filter='*Matvec*:*Embed*:*Moe*:*MoE*:*Matmul*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" | head -8
timeout 60 $BS test_gpu --gtest_filter='*Persistent*:*Hazards*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" | head -8
stamp "tests"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B model"
same m1q
bench $BS m1q new; bench $OLD m1q old; bench $BS m1q new2; bench $OLD m1q old2
for r in new old; do
  R=$BS; [ $r = old ] && R=$OLD
  timeout 60 $R bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 --warm 30 > /tmp/o/profile-m1q-$r.txt 2>&1
  echo "profile m1q $r: $(head -1 /tmp/o/profile-m1q-$r.txt | grep -o 'profiled: .*')"; grep -E "q6k|q4k" /tmp/o/profile-m1q-$r.txt
done
for r in new old; do
  R=$BS; [ $r = old ] && R=$OLD
  echo "gemv $r:"; timeout 60 $R bs_gemv_bench --dtype q6k --shape 128256x2048 4096x14336 2048x8192 --wg 32 64 128 --rows 1 2 4 --reps 30 2>&1 | grep -E "^q6k" | head -8
done
stamp "1B done"
rm -rf /tmp/m1q
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
same m8q
bench $BS m8q new; bench $OLD m8q old; bench $BS m8q new2; bench $OLD m8q old2
timeout 60 $BS bs_prefill_profile /tmp/m8q --tokens 512 --reps 3 --warm 4 > /tmp/o/profile-m8q-new.txt 2>&1
echo "profile m8q new: $(head -1 /tmp/o/profile-m8q-new.txt | grep -o 'profiled: .*')"; grep -E "q6k|q4k" /tmp/o/profile-m8q-new.txt
tar -C /tmp -cJf $OUT/s2.tar.xz o
stamp "all done"
