#!/usr/bin/env bash
# Prepared in session 18 for the next session (not run: no device time left). ~2 minutes.
# (1) test_kernels on the H200 at the final tree. Session 18's C7 found Moe.ExpertMatvecReadsItsExpertFromTheRouter and
#     Moe.Mxfp4MatvecMatchesFloat64 failing with the matvec butterfly at 8-invocation workgroups; 376a486 keeps the
#     butterfly to whole subgroups. Predicted: all pass. Carry the stripped binary:
#       strip -o .dev/s19t/test_kernels build/tests/kernels/test_kernels    (carry .gl, .dev/carry, .dev/s19t)
# (2) The 8B f16's -0.4% with the butterfly: registers of the F16 matvec pipelines (BLUESHIFT_PIPELINE_STATS=1) on the
#     8B f16 decode, with and without it. The build without it, as session 18's C6 made it: in a copy of the tree set
#     matvec.glsl's `MV_TREDUCE = 1` to 0, build, `strip -o /tmp/b build/blueshift && xz -c /tmp/b >
#     .dev/s19t/blueshift_notr.xz`. If the butterfly's kernels hold more registers, MV_TMAX 8 is the next try.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
LD_LIBRARY_PATH=/tmp/bs/bundle/lib timeout 150 .dev/s19t/test_kernels 2>&1 | grep -E "^\[  (PASSED|FAILED)|tests ran" | head -20
stamp "test_kernels"
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
BLUESHIFT_PIPELINE_STATS=1 timeout 60 $BS blueshift bench --model /tmp/m8f --prompt-tokens 16 --gen-tokens 64 --reps 3 \
  --json 2>&1 >/dev/null | grep "pipeline-stats" | grep -i "matvec_f16" | head -20
if [ -f .dev/s19t/blueshift_notr.xz ]; then
  xz -dc .dev/s19t/blueshift_notr.xz > /tmp/bs/bundle/bin/blueshift_notr && chmod +x /tmp/bs/bundle/bin/blueshift_notr
  echo "-- without the butterfly:"
  BLUESHIFT_PIPELINE_STATS=1 timeout 60 $BS blueshift_notr bench --model /tmp/m8f --prompt-tokens 16 --gen-tokens 64 --reps 3 \
    --json 2>&1 >/dev/null | grep "pipeline-stats" | grep -i "matvec_f16" | head -20
fi
stamp "stats"
