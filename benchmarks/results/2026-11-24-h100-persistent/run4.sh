#!/usr/bin/env bash
# Persistent decode kernel, device run 4: staging loads batched; final A/B, correctness (1B 300 steps, 8B 60 steps), HF parity
# (grid x workgroup), residency probed first (a grid barrier timeout makes `logits --step` fail); breakdown.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json BLUESHIFT_VALIDATION=0
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
mkdir -p /tmp/bs; tar -C /tmp/bs -xJf .dev/pk/bundle.tar.xz
BS=/tmp/bs/bundle/run
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
export BS_BINARY=/tmp/bs/bundle/bin/blueshift; timeout 60 $BS test_model --gtest_filter="Synth/Persistent.*" 2>&1 | grep -E "persistent vs|FAILED|PASSED"
tar -C /tmp/bs -xJf .dev/pk/shared.tar.xz; echo "== HF parity"; timeout 60 python3 benchmarks/parity_check.py $BS /tmp/bs/shared/data/models 2>&1 | tail -12
mk() { $BS blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null
       $BS blueshift convert /tmp/hf /tmp/$2 --quant q4_k_m >/dev/null; rm -rf /tmp/hf; }
probe() { env $2 timeout 30 $BS blueshift logits --model /tmp/$1 --tokens 1,2,3 --out /tmp/p.npy --step >/dev/null 2>/tmp/p.err \
          && echo "resident: $2" || { echo "NOT resident / failed: $2: $(tail -1 /tmp/p.err)"; return 1; }; }
bench() { env $3 timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/$1-$2.json 2>/tmp/b.err \
  && python3 -c "
import json; d=json.load(open('/tmp/$1-$2.json')); k=d['gpu_ms_by_kernel']
print('%-4s %-10s decode %6.1f tok/s (%.3f ms) | profiled: %s' % ('$1','$2',d['decode_tok_s'],1000/d['decode_tok_s'],', '.join('%s %.3f'%(n,v) for n,v in sorted(k.items(),key=lambda t:-t[1]))))" \
  || { echo "$1 $2 FAILED: $(tail -2 /tmp/b.err)"; }; }
V="base:X=0"
for m in m1:llama-3.2-1b m8:llama-3.1-8b; do
  M=${m%%:*}; t0=$(date +%s); mk ${m#*:} $M; echo "== $M ready in $(( $(date +%s) - t0 )) s"
  $BS blueshift bench --model /tmp/$M --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null 2>&1
  ok=""
  for v in $V; do n=${v%%:*}; e=${v#*:}; probe $M "${e//,/ }" && ok="$ok $v"; done
  bench $M nopk BLUESHIFT_NO_PERSISTENT=1
  for v in $ok; do n=${v%%:*}; e=${v#*:}; bench $M $n "${e//,/ }"; done

  bench $M skipall BLUESHIFT_PERSISTENT_SKIP=31
  bench $M skipattn BLUESHIFT_PERSISTENT_SKIP=2
  bench $M base2 X=0
  bench $M nopk2 BLUESHIFT_NO_PERSISTENT=1
  if true; then
    N=300; [ $M = m8 ] && N=60
    T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range($N)))")
    BLUESHIFT_NO_PERSISTENT=1 timeout 60 $BS blueshift logits --model /tmp/$M --tokens $T --out /tmp/ref.npy --step >/dev/null 2>&1
    for v in $ok; do n=${v%%:*}; e=${v#*:}
      env ${e//,/ } timeout 60 $BS blueshift logits --model /tmp/$M --tokens $T --out /tmp/pk.npy --step >/dev/null 2>&1 && echo -n "$n: " && timeout 60 python3 .dev/pk/cmp.py /tmp/pk.npy /tmp/ref.npy
    done
    rm -f /tmp/*.npy
  fi
  rm -rf /tmp/$M
done
