#!/usr/bin/env bash
# Session 15, run S1 (first run on the H200): (a) the int8 / f16 cooperative-matrix ceilings of this driver
# (vk_cooperative_matrix_perf); (b) the persistent kernel's touches (s5-persistent-touch.patch with subgroup 0 left
# out; BLUESHIFT_PERSISTENT_TOUCH=0: without): greedy ids, decode A/B on the 1B and 8B q4_k_m; PARTS 1 / 3 on this
# GPU; (c) persistent_phases.sh on both; (d) the 1B rows beside llama.cpp (run_peer.sh).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.max.mem,memory.total,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
if [ -x .dev/vkcm/run.sh ] || [ -f .dev/vkcm/run.sh ]; then
  timeout 150 bash .dev/vkcm/run.sh > /tmp/o/vkcm.txt 2>&1; tail -40 /tmp/o/vkcm.txt
fi
stamp "vkcm"
mkdir -p /tmp/t && tar -C /tmp/t -xJf .dev/s15/tests.tar.xz
export LD_LIBRARY_PATH=/tmp/bs/bundle/lib
echo "== test_coopmat (Q6_K chunk index helper)"; timeout 150 /tmp/t/test_coopmat 2>&1 | tail -3
echo "== test_model Persistent (touches)"; BS_BINARY=/tmp/bs/bundle/bin/blueshift timeout 120 /tmp/t/test_model --gtest_filter='*Persistent*' 2>&1 | tail -3
unset LD_LIBRARY_PATH
stamp "tests"
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
dec() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/dec-$m-$lab.json 2>/dev/null
  python3 -c "import json; d=json.load(open('/tmp/o/dec-$m-$lab.json')); print('$m $lab: ttft', round(d['ttft_ms'],2), 'prefill', round(d['prefill_tok_s']), 'decode', round(d['decode_tok_s'],1), 'tok/s,', round(d['pct_of_peak'],1), '% of peak', round(d['peak_gb_s']), 'GB/s; kernel', round(d['gpu_ms_by_dispatch']['decode_persistent'],4), 'ms')" || echo "$m $lab FAILED"
}
ids() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 64 > /tmp/i-$m-$lab.txt 2>/dev/null; }
ab() {  # model
  local m=$1
  ids $m t1; ids $m t0 BLUESHIFT_PERSISTENT_TOUCH=0
  cmp -s /tmp/i-$m-t1.txt /tmp/i-$m-t0.txt && echo "$m greedy ids (64 after 300): touch == no touch" || echo "$m greedy ids DIFFER"
  for i in 1 2; do dec $m t1-$i; dec $m t0-$i BLUESHIFT_PERSISTENT_TOUCH=0; done
  dec $m p1 BLUESHIFT_PERSISTENT_PARTS=1; dec $m p3 BLUESHIFT_PERSISTENT_PARTS=3
  dec $m p1t0 BLUESHIFT_PERSISTENT_PARTS=1 BLUESHIFT_PERSISTENT_TOUCH=0
  for w in 384 512 768 1024; do dec $m w$w-p1 BLUESHIFT_PERSISTENT_WG=$w BLUESHIFT_PERSISTENT_PARTS=1; done
  dec $m w768-p2 BLUESHIFT_PERSISTENT_WG=768
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
ab m1q
stamp "1B A/B"
echo "== phases 1B q4_k_m (touch)"; timeout 80 bash benchmarks/persistent_phases.sh $BS /tmp/m1q
echo "== phases 1B q4_k_m (no touch)"; BLUESHIFT_PERSISTENT_TOUCH=0 timeout 80 bash benchmarks/persistent_phases.sh $BS /tmp/m1q
stamp "1B phases"
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B model"
ab m8q
stamp "8B A/B"
echo "== phases 8B q4_k_m (touch)"; timeout 120 bash benchmarks/persistent_phases.sh $BS /tmp/m8q 32
stamp "8B phases"
rm -rf /tmp/m8q
mkdir -p /tmp/peer-out
timeout $(( 580 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
cat /tmp/peer-out/peer.md
stamp "1B peer"
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/s1.tar.xz o
stamp "all done"
