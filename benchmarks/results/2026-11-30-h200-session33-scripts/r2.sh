#!/usr/bin/env bash
# R2 (session 33): the Q6_K head's matvec with ROWS rows a workgroup taken G at a time (q6k_pipe.comp, built by
# `glslc --target-env=vulkan1.2 -std=450 -O -I../../../kernels_glsl -DPIPE -DG=4u q6k_pipe.comp -o spv/q6k.pipe4.spv`
# and likewise pipe2 (G 2), pipe8 (G 8), seq4 (G 4 without the prefetch)), against the registry's matvec_q6k_wide
# (spv/q6k.wide.spv: build/kernels_glsl/spv/matvec_q6k_wide.spv of 2bde329)
# (ROWS 4: one group a workgroup, 32,064 workgroups of one subgroup), isolated, one bs_gemv_bench run.
# Count: the heads are 230 MB (128256 x 2048 at 224 bytes a block) and 460 MB (x 4096); at the measured ~4.4 TB/s,
# 52 and 104 us. Session 29 (P1): 80.9 and 149.0 us, 2.8-3.1 TB/s.
# Hypothesis: a workgroup lives one round of loads: its 4 rows' loads, then the math, then the reduction; nothing
# overlaps the loads within it, and the block scheduler must start 243 workgroups an SM. With the next group's loads
# issued before this group's math, the loads of consecutive groups overlap.
# Predicted: pipe4 at 16-32 rows 3.6-4.0 TB/s (58-64 us, 115-128 us); seq4 no better than the registry (within 3%).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
D=benchmarks/results/2026-11-30-h200-session33-scripts
rm -rf /tmp/o; mkdir -p /tmp/o
timeout 400 $BS bs_gemv_bench --json --reps 40 --rounds 2 --dtype q6k --shape 128256x2048,128256x4096 \
  --wg 32 --rows 4,8,16,32,64 --mv-spv $D/spv > /tmp/o/r2.json
python3 - /tmp/o/r2.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"stream_read {d['measured_stream_gb_s']:.0f} GB/s")
g = {"wide": 1, "pipe2": 2, "pipe4": 4, "pipe8": 8, "seq4": 4}
for r in d["results"]:
    print(f"{r['m']}x{r['k']} ({r['weight_bytes'] / 1e6:.0f} MB)")
    for kern in sorted({c["kernel"] for c in r["configs"]}):
        cs = [c for c in r["configs"] if c["kernel"] == kern and c["rows"] >= g.get(kern, 1)]
        for c in sorted(cs, key=lambda c: c["rows"]):
            print(f"  {kern:9} wg {c['wg']:3} rows {c['rows']:2}: {c['median_us']:7.1f} us {c['gb_s']:5.0f} GB/s"
                  f" | stream {c['stream_us']:7.1f} us {c['stream_gb_s']:5.0f} GB/s")
PY
cp /tmp/o/r2.json $OUT/
