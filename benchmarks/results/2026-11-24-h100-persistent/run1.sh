#!/usr/bin/env bash
# Persistent decode kernel (branch persist), device run 1: correctness with the real grid, then decode A/B.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json BLUESHIFT_VALIDATION=0
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
mkdir -p /tmp/bs; tar -C /tmp/bs -xJf .dev/pk/bundle.tar.xz; tar -C /tmp/bs -xJf .dev/pk/shared.tar.xz
BS=/tmp/bs/bundle/run; SHARED=/tmp/bs/shared; export BS_BINARY=/tmp/bs/bundle/bin/blueshift
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== test_model: persistent vs per-phase (synth, grid = SM count), synth vs float64"
timeout 150 $BS test_model --gtest_filter='Synth/Persistent.*:Features/Synth.*' 2>&1 | grep -E "persistent vs|GPU vs|OK|FAILED|PASSED|rror" | head -40
echo "== HF parity (tiny models, decode through the persistent kernel where eligible)"
timeout 60 python3 benchmarks/parity_check.py $BS $SHARED/data/models 2>&1 | tail -12
echo "== 1B q4_k_m logits, 300 steps: persistent vs per-phase"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf1 --seed 1 >/dev/null
$BS blueshift convert /tmp/hf1 /tmp/m1 --quant q4_k_m >/dev/null; rm -rf /tmp/hf1
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range(300)))")
timeout 60 $BS blueshift logits --model /tmp/m1 --tokens $T --out /tmp/pk.npy --step 2>&1 | tail -1
BLUESHIFT_NO_PERSISTENT=1 timeout 60 $BS blueshift logits --model /tmp/m1 --tokens $T --out /tmp/ref.npy --step 2>&1 | tail -1
BLUESHIFT_PERSISTENT_POLL_ALL=1 timeout 60 $BS blueshift logits --model /tmp/m1 --tokens $T --out /tmp/pa.npy --step 2>&1 | tail -1
timeout 90 python3 .dev/pk/cmp.py /tmp/pk.npy /tmp/ref.npy
timeout 90 python3 .dev/pk/cmp.py /tmp/pa.npy /tmp/ref.npy
rm -f /tmp/*.npy; rm -rf /tmp/m1
echo "== decode A/B 1B"
timeout 120 benchmarks/decode_ab.sh $BS $OUT/ab llama-3.2-1b q4_k_m nopk:BLUESHIFT_NO_PERSISTENT=1 2>&1 | tail -5
echo "== decode A/B 8B"
timeout 200 benchmarks/decode_ab.sh $BS $OUT/ab llama-3.1-8b q4_k_m nopk:BLUESHIFT_NO_PERSISTENT=1 2>&1 | tail -5
