#!/usr/bin/env bash
# Prepared in session 16 for the next session (not run: no device time left). Does 16 warps per SM bound a Q4_K
# matvec at the persistent decode kernel's ~1.4 TB/s? The standalone matvec_q4k built with MV_OCCUPANCY_PAD
# (kernels_glsl/matvec.glsl: 46 KB of shared memory, so 4 workgroups an SM; wg 128 = 16 warps, the persistent
# kernel's count) against the same build without it, back to back, at 8B shapes. Build the SPIR-V first (the
# registry's flags):
#   mkdir -p .dev/s16/spv; for v in nopad: pad46k:-DMV_OCCUPANCY_PAD=11776 pad23k:-DMV_OCCUPANCY_PAD=5888; do
#     glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I kernels_glsl ${v#*:} \
#       -o .dev/s16/spv/q4k.${v%%:*}.spv kernels_glsl/matvec_q4k.comp; done
# Carry .gl, .dev/carry (a bundle with bs_gemv_bench) and .dev/s16. Reading: if pad46k at wg 128 streams near 1.4
# TB/s while nopad reaches ~2.1, occupancy explains the persistent phases (then: a leaner task at <= 64 registers);
# if it holds ~2 TB/s, the persistent kernel's own structure costs the time. A confound to keep in mind: 4 x 47 KB of
# shared memory leaves the SM less L1 (shared and L1 split 256 KB); pad23k (about 9 workgroups an SM: wg 64 = 18
# warps) is the second point with more L1 left.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/o
BLUESHIFT_PIPELINE_STATS=1 timeout 300 $BS bs_gemv_bench --dtype q4k --shape 14336x4096 4096x14336 4096x4096 \
  --wg 32 64 128 256 512 --rows 1 2 4 8 --reps 50 --rounds 3 --mv-spv .dev/s16/spv --json > /tmp/o/gemv.json 2> /tmp/o/gemv.err
grep "pipeline-stats" /tmp/o/gemv.err | grep -E "q4k\.(nopad|pad)" | sort -u | head -20
python3 - <<'PY'
import json
for r in json.load(open('/tmp/o/gemv.json')):
    print(f"== q4k {r['m']}x{r['k']}: stream GB/s by wg x rows (warps an SM with pad46k: wg/32 x 4)")
    by = {}
    for c in r['configs']:
        by.setdefault(c['kernel'], {})[(c['wg'], c['rows'])] = c['stream_gb_s']
    for k in ('nopad', 'pad23k', 'pad46k', 'registry'):
        if k not in by: continue
        cells = '  '.join(f"{wg}x{rows}:{by[k][(wg, rows)]:5.0f}" for (wg, rows) in sorted(by[k]))
        print(f"  {k:9s} {cells}")
PY
tar -C /tmp -cJf $OUT/s12.tar.xz o
