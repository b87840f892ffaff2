#!/usr/bin/env bash
# Session 7: why does qwen35-tiny's greedy differ from HF on the H100 now (MATCH in session 6)? Old (5c4d614) vs new
# bundle, prefill logits and greedy ids, with the suspects switched off one at a time.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsbase && tar -C /tmp/bsbase -xJf .dev/s7/base.tar.xz
NEW=$BS; OLD=/tmp/bsbase/bundle/run
export BLUESHIFT_ROPE_FREQ_BF16=1
python3 $SHARED/tools/make_refs.py /tmp/refs llama-tiny > /tmp/refs.txt 2>&1 || tail -3 /tmp/refs.txt
python3 $SHARED/tools/make_refs_2026.py /tmp/refs qwen35-tiny >> /tmp/refs.txt 2>&1 || tail -3 /tmp/refs.txt
for name in qwen35-tiny llama-tiny; do
  M=/tmp/refs/$name
  [ -d $M ] || { echo "$name: not in shared"; continue; }
  T=$(python3 -c "import json; print(','.join(map(str, json.load(open('$M/ref.json'))['tokens'])))")
  P=$(python3 -c "import json; print(','.join(map(str, json.load(open('$M/ref.json'))['prompt'])))")
  NG=$(python3 -c "import json; print(len(json.load(open('$M/ref.json'))['greedy']))")
  for v in "old:$OLD:X=0" "new:$NEW:X=0" "new-noxs:$NEW:BLUESHIFT_ROWSCM_XS=0" "new-nocm:$NEW:BLUESHIFT_NO_COOPMAT=1" "old-nocm:$OLD:BLUESHIFT_NO_COOPMAT=1" "new-nopk:$NEW:BLUESHIFT_NO_PERSISTENT=1" "old-nopk:$OLD:BLUESHIFT_NO_PERSISTENT=1"; do
    IFS=: read -r tag run e <<< "$v"
    env $e $run blueshift logits --model $M --tokens $T --out /tmp/$tag.npy >/dev/null 2>&1
    env $e $run blueshift generate --model $M --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens $NG > /tmp/$tag.ids 2>/dev/null
  done
  python3 - $M <<'PY'
import json, sys, numpy as np
ref = json.load(open(sys.argv[1] + "/ref.json"))
want = np.load(sys.argv[1] + "/logits_full.npy")
tags = ["old", "new", "new-noxs", "new-nocm", "old-nocm", "new-nopk", "old-nopk"]
for t in tags:
    g = np.load(f"/tmp/{t}.npy"); ids = [int(x) for x in open(f"/tmp/{t}.ids").read().split()]
    rel = (np.linalg.norm(g - want, axis=1) / np.linalg.norm(want, axis=1)).max()
    same = "bit-identical to old" if np.array_equal(g, np.load("/tmp/old.npy")) else "differs from old (max abs %.2e)" % np.abs(g - np.load("/tmp/old.npy")).max()
    print(f"{sys.argv[1].split('/')[-1]:12s} {t:9s} prefill vs HF {rel:.3e}  {same}  greedy {'MATCH' if ids == ref['greedy'] else 'DIFFER at %d' % next((i for i,(a,b) in enumerate(zip(ids, ref['greedy'])) if a != b), -1)}")
PY
done
