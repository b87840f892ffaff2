"""Tables for the serve_*.sh device scripts, from the files they leave in OUT.

bench --json files are OUT/bench-NAME.json; bs_gemv_bench --json files hold one result per shape. Each script's
heredoc imports this module (benchmarks/ on sys.path) and prints its own rows with these pieces.
"""
import json
import os


def load(out, name):
    """OUT/NAME parsed as JSON, or None when it is missing or unreadable (a run that failed)."""
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception:
        return None


def best_by_kernel(result):
    """The fastest configuration of each kernel in one bs_gemv_bench result (median_us)."""
    best = {}
    for c in result["configs"]:
        b = best.get(c["kernel"])
        if b is None or c["median_us"] < b["median_us"]:
            best[c["kernel"]] = c
    return best


def batch_one(out):
    """bench-1.json's decode tok/s (the Session loop), 0 when that run failed."""
    b1 = load(out, "bench-1.json")
    return b1["decode_tok_s"] if b1 else 0


def step_table(out, names, width, extra=None):
    """One row per bench-NAME.json: aggregate and per-stream tok/s, ms a step, x batch 1, then extra(d) or the
    dispatches / barriers a step; batch 1 first. Returns base (batch 1 tok/s)."""
    base = batch_one(out)
    tail = "" if extra else f" {'dispatches/barriers a step':>27}"
    print(f"{'run':>{width}} {'aggregate tok/s':>15} {'per stream':>10} {'ms/step':>8} {'x batch 1':>9}{tail}")
    if base:
        print(f"{'1 (Session loop)':>{width}} {base:>15.1f} {base:>10.1f} {1e3 / base:>8.3f} {1.0:>9.2f}")
    for name in names:
        d = load(out, f"bench-{name}.json")
        if not d:
            print(f"{name:>{width}} failed")
            continue
        x = d["aggregate_decode_tok_s"] / base if base else 0
        row = (f"{name:>{width}} {d['aggregate_decode_tok_s']:>15.1f} {d['per_stream_decode_tok_s']:>10.1f} "
               f"{d['ms_per_step']:>8.3f} {x:>9.2f}")
        if extra:
            row += "   " + extra(d)
        else:
            row += f" {d.get('dispatches_per_step', 0):>18.0f} / {d.get('barriers_per_step', 0):<6.0f}"
        print(row)
    return base


def profiles(out, names, top, digits):
    """GPU time by kernel of each profiled step (bench --profile; timestamps after every dispatch serialize the
    step, so these are shares, not a step time)."""
    for name in names:
        d = load(out, f"bench-{name}.json") or {}
        by = d.get("profile_ms_by_kernel")
        if by:
            head = sorted(by.items(), key=lambda kv: -kv[1])[:top]
            print(f"profile {name}: {d['profile_step_ms']:.2f} ms: " + ", ".join(f"{k} {v:.{digits}f}" for k, v in head))


def issue_bar(base, best, what, note=""):
    """Issue 17's bar: aggregate decode at N = 16 >= 6x batch 1."""
    if base:
        r = best / base
        print(f"issue bar: N=16 aggregate ({what}) {r:.2f}x batch 1 ({'meets' if r >= 6 else 'misses'} >= 6x){note}")
