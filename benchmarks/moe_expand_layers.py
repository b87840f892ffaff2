#!/usr/bin/env python3
"""Grows a converted RDRR model (blueshift's own, uncompressed shards: convert --no-compress) to N layers by
repeating its layers cyclically (new layer n holds source layer n % L's bytes), so a bench can run at a real
layer count without synthesizing and converting the whole bf16 checkpoint (Mixtral 8x7B in bf16 is 93 GB; the
lease has 64 GB of disk). The weights are random anyway; repeated layers route and read exactly as distinct
ones would. Shards are rewritten (one per thread, tensors whole), sha256 recomputed, totalSize, numLayers,
layer types and x-blueshift.config updated; `blueshift verify` passes on the result.
  moe_expand_layers.py SRC_DIR DST_DIR N_LAYERS [THREADS]"""
import hashlib, json, mmap, os, re, shutil, sys
from concurrent.futures import ThreadPoolExecutor

src, dst, n_layers = sys.argv[1], sys.argv[2], int(sys.argv[3])
threads = int(sys.argv[4]) if len(sys.argv) > 4 else os.cpu_count()
m = json.load(open(os.path.join(src, "manifest.json")))
if m.get("hashAlgorithm", "sha256") != "sha256" or any(s.get("compression") for s in m["shards"]):
    sys.exit("expected sha256 and uncompressed shards (convert --no-compress)")
cfg = m["x-blueshift"]["config"]
L = cfg["n_layers"]
maps = []
for s in m["shards"]:
    f = open(os.path.join(src, s.get("filename") or s["fileName"]), "rb")
    maps.append(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if s["size"] else b"")

def pieces(t):  # (shard, offset, size) of a tensor's bytes, in order
    if "spans" in t:
        return [(p["shardIndex"], p["offset"], p["size"]) for p in t["spans"]]
    return [(t["shard"], t["offset"], t["size"])]

layer_re = re.compile(r"^blk\.(\d+)\.")
hf_re = re.compile(r"(layers\.)(\d+)(\.)")
# The new tensor list: non-layer tensors where they were, the layers' tensors repeated in layer order.
items = list(m["tensors"].items())
first = next(i for i, (_, t) in enumerate(items) if layer_re.match(t["x-blueshift"]["name"]))
last = max(i for i, (_, t) in enumerate(items) if layer_re.match(t["x-blueshift"]["name"]))
by_layer = {}
for name, t in items[first:last + 1]:
    by_layer.setdefault(int(layer_re.match(t["x-blueshift"]["name"]).group(1)), []).append((name, t))
out = list(items[:first])
for n in range(n_layers):
    for name, t in by_layer[n % L]:
        t2 = json.loads(json.dumps(t))
        t2["x-blueshift"]["name"] = layer_re.sub(f"blk.{n}.", t["x-blueshift"]["name"])
        if "group" in t2: t2["group"] = f"layer.{n}"
        out.append((hf_re.sub(lambda g: f"{g.group(1)}{n}{g.group(3)}", name, count=1), t2, t))
# (manifest name, new entry, source entry): the new entries are copies, so the sources keep their offsets.
out = [(o[0], json.loads(json.dumps(o[1])), o[1]) if len(o) == 2 else o for o in out] + \
      [(n, json.loads(json.dumps(t)), t) for n, t in items[last + 1:]]

# Shards: about total / threads bytes each, tensors whole, 256-byte aligned.
total = sum(t["size"] for _, _, t in out)
target = max(total // threads + 1, 1 << 20)
plan, cur, size = [], [], 0
for e in out:
    if cur and size + e[2]["size"] > target:
        plan.append(cur); cur, size = [], 0
    cur.append(e); size = (size + e[2]["size"] + 255) // 256 * 256
plan.append(cur)
shutil.rmtree(dst, ignore_errors=True)
os.makedirs(dst)

def write(i):
    h, off = hashlib.sha256(), 0
    with open(os.path.join(dst, f"shard_{i:05d}.bin"), "wb") as f:
        for name, t2, t in plan[i]:
            pad = (-off) % 256
            if pad:
                f.write(b"\0" * pad); h.update(b"\0" * pad); off += pad
            src_pieces = pieces(t)
            t2.pop("spans", None)
            t2["shard"], t2["offset"] = i, off
            for s, o, n in src_pieces:
                chunk = maps[s][o:o + n]
                f.write(chunk); h.update(chunk); off += n
    return {"index": i, "filename": f"shard_{i:05d}.bin", "size": off, "hash": h.hexdigest()}

with ThreadPoolExecutor(threads) as ex:
    shards = list(ex.map(write, range(len(plan))))
g = 0
for s in shards:
    s["offset"] = g; g += s["size"]
m["shards"] = shards
m["tensors"] = {name: t2 for part in plan for name, t2, _ in part}
m["totalSize"] = g
types = cfg["layer_types"]
cfg["layer_types"] = [types[n % L] for n in range(n_layers)]
for key in ("layer_kinds", "layer_head_dims", "layer_kv_heads", "layer_ffn_dims"):
    if key in cfg: cfg[key] = [cfg[key][n % L] for n in range(n_layers)]
cfg["n_layers"] = n_layers
m["architecture"]["numLayers"] = n_layers
lp = m.get("inference", {}).get("layerPattern", {})
if isinstance(lp.get("layerTypes"), list):
    lp["layerTypes"] = [lp["layerTypes"][n % L] for n in range(n_layers)]
m.setdefault("metadata", {})["x-blueshift-expanded"] = f"layers repeated cyclically from a {L}-layer conversion"
json.dump(m, open(os.path.join(dst, "manifest.json"), "w"), indent=1)
for f in os.listdir(src):
    if f.startswith("tokenizer"): shutil.copy(os.path.join(src, f), dst)
print(f"{dst}: {n_layers} layers from {L}, {len(shards)} shards, {g / 1e9:.2f} GB")
