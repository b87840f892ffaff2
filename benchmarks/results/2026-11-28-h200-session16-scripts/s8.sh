#!/usr/bin/env bash
# Session 16, S8: (1) test_coopmat (attention_fa's epilogue loops merged) and test_model Persistent on the H200;
# (2) PIPE (a Q4_K row's next step of loads before this step's math) A/B, bit for bit, decode tok/s and registers;
# (3) load time after the assembly buffers are reused (8B f16: the sink was 11-13 s; predicted ~5 s).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/t && tar -C /tmp/t -xJf .dev/s16/tests.tar.xz
export LD_LIBRARY_PATH=/tmp/bs/bundle/lib BS_BINARY=/tmp/bs/bundle/bin/blueshift
timeout 200 /tmp/t/test_coopmat 2>&1 | grep -E "^\[  (PASSED|FAILED) |tests ran" | tail -4
timeout 120 /tmp/t/test_model --gtest_filter='*Persistent*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |tests ran" | tail -3
unset LD_LIBRARY_PATH BS_BINARY
stamp tests
dec() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" BLUESHIFT_PIPELINE_STATS=1 timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/dec-$m-$lab.json 2>/tmp/o/dec-$m-$lab.err
  local regs=$(grep "pipeline-stats" /tmp/o/dec-$m-$lab.err | grep decode_persistent | grep -o "Register Count=[0-9]*" | head -1)
  python3 -c "import json; d=json.load(open('/tmp/o/dec-$m-$lab.json')); g=d['gpu_ms_by_dispatch']; print('$m $lab: decode', round(d['decode_tok_s'],1), 'tok/s, kernel', round(g['decode_persistent'],4), 'ms; $regs')" || { echo "$m $lab FAILED"; tail -3 /tmp/o/dec-$m-$lab.err; }
}
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(64)))")
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
for cfg in "0 2" "1 2" "1 1"; do set -- $cfg
  BLUESHIFT_PERSISTENT_PIPE=$1 BLUESHIFT_PERSISTENT_PARTS=$2 $BS blueshift logits --model /tmp/m1q --tokens $P --step --out /tmp/l$1$2.npy >/dev/null 2>&1; done
cmp -s /tmp/l02.npy /tmp/l12.npy && cmp -s /tmp/l02.npy /tmp/l11.npy && echo "m1q decode-path logits (64 steps): PIPE 0/1, PARTS 1/2 bit for bit" || echo "m1q logits DIFFER"
for i in 1 2; do dec m1q base-$i; dec m1q pipe2-$i BLUESHIFT_PERSISTENT_PIPE=1; dec m1q pipe1-$i BLUESHIFT_PERSISTENT_PIPE=1 BLUESHIFT_PERSISTENT_PARTS=1; done
stamp 1B
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1
BLUESHIFT_LOAD_STATS=1 $BS blueshift bench --model /tmp/m8q --load-only 2>&1 | tail -3
for i in 1 2; do dec m8q base-$i; dec m8q pipe1-$i BLUESHIFT_PERSISTENT_PIPE=1 BLUESHIFT_PERSISTENT_PARTS=1; done
dec m8q pipe2 BLUESHIFT_PERSISTENT_PIPE=1
stamp 8Bq
rm -rf /tmp/m8q; $BS blueshift convert /tmp/h8 /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h8
for i in 1 2; do BLUESHIFT_LOAD_STATS=1 $BS blueshift bench --model /tmp/m8f --load-only 2>&1 | tail -3; done
stamp 8Bf
tar -C /tmp -cJf $OUT/s8.tar.xz o
