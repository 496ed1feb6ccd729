#!/usr/bin/python3
"""bench/tuning: how good is the cost model's untuned pick? (issue 12)

For every case of the benchmark suite (bench/suite, the same programs and
shapes) it runs `tilec tune` with a fresh tuning cache and reads the records
back: per kernel the measured time of the cost model's pick (the untuned
compile, trial 1), the tuned best, their ratio, and the Spearman rank
correlation between the cost model's score and the measured time over the
candidates the model ranked (flat-form tiles, by their rank in the tile
search; +1: the model orders them exactly as measured). Then per family: kernels, how many picks are within
10% of the tuned best, the median gain where the pick is worse, and the mean
rank correlation.

    /usr/bin/python3 bench/tuning/tuning.py [--tilec build/tools/tilec]
        [--target llvm] [--only conv,matmul] [--trials 10] [--budget 30s]
        [--json FILE]

Timing on a shared machine: read the figures with its load in mind (the
load average is printed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(os.path.dirname(HERE), "suite")


def suite_cases():
    sys.path.insert(0, SUITE)
    import suite  # noqa: E402  (the suite's case table; imports torch)
    return suite.CASES


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(xs, ys):
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / (sxx * syy) ** 0.5


def tune_case(args, case, cache_dir):
    cmd = [args.tilec, "tune", os.path.join(SUITE, case["tile"]), "--target", args.target, "--trials",
           str(args.trials), "--budget", args.budget, "-q"]
    for name, dims in case["shapes"].items():
        cmd += ["-s", f"{name}=f32[{','.join(map(str, dims))}]"]
    env = dict(os.environ, TILEC_CACHE_DIR=cache_dir)
    env.pop("TILEC_TUNING_CACHE", None)
    env.pop("TILEC_TUNING_CACHE_FILE", None)
    start = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.time() - start
    if r.returncode != 0:
        return None, seconds, r.stderr.strip().splitlines()[-1:] or ["failed"]
    path = os.path.join(cache_dir, "tuning.jsonl")
    records = [json.loads(line) for line in open(path)] if os.path.exists(path) else []
    return records, seconds, None


def kernel_row(case, rec):
    model, best = rec.get("model_ms", 0), rec.get("median_ms", 0)
    scored = [t for t in rec["trials"] if t.get("ok") and t.get("model_rank", -1) >= 0]
    # The model's cost of a tile: its rank (0: best), which breaks ties in
    # the score as the tile search does.
    rho = spearman([t["model_rank"] for t in scored], [t["median_ms"] for t in scored])
    return dict(case=case["name"], family=case["family"], kernel=rec["kernel"], model_ms=model, tuned_ms=best,
                ratio=model / best if best > 0 else None, rho=rho, scored=len(scored),
                trials=len(rec["trials"]), winner=rec["winner"])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tilec", default=os.path.join(HERE, "..", "..", "build", "tools", "tilec"))
    p.add_argument("--target", default="llvm")
    p.add_argument("--only", default="", help="case-name substrings or families, comma-separated")
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--budget", default="30s", help="per case (tilec tune --budget)")
    p.add_argument("--json", help="write every row to this file")
    args = p.parse_args()
    cases = suite_cases()
    if args.only:
        words = args.only.split(",")
        cases = [c for c in cases if any(w == c["family"] or w in c["name"] for w in words)]
    print(f"bench/tuning: {len(cases)} suite cases on {args.target}, --trials {args.trials} --budget {args.budget}; "
          f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    print("pick/best = the cost model's pick's median time over the tuned best's (1.00: the pick won); "
          "rho = Spearman(model rank, measured time) over the ranked flat-form candidates (n)\n", flush=True)
    header = f"{'case':<32} {'kernel':<38} {'pick ms':>9} {'tuned ms':>9} {'pick/best':>9} {'rho':>6} {'n':>3}  winner"
    print(header)
    print("-" * len(header))
    rows = []
    start = time.time()
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="tilec_bench_tuning_") as cache_dir:
            records, seconds, error = tune_case(args, case, cache_dir)
        if error:
            print(f"{case['name']:<32} FAILED: {error[0]}", flush=True)
            continue
        for rec in records:
            row = kernel_row(case, rec)
            row["tune_s"] = seconds
            rows.append(row)
            rho = "-" if row["rho"] is None else f"{row['rho']:+.2f}"
            ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}"
            kernel = row["kernel"] if len(row["kernel"]) <= 38 else row["kernel"][:35] + "..."
            print(f"{case['name'][:32]:<32} {kernel:<38} {row['model_ms']:>9.4f} {row['tuned_ms']:>9.4f} "
                  f"{ratio:>9} {rho:>6} {row['scored']:>3}  {json.dumps(row['winner'])}", flush=True)

    print(f"\nper family ({time.time() - start:.0f} s in all; load "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}):")
    print(f"{'family':<10} {'kernels':>7} {'pick within 10%':>16} {'median gain where worse':>24} {'mean rho':>9}")
    families = sorted({r["family"] for r in rows})
    for fam in families + ["all"]:
        rs = [r for r in rows if fam == "all" or r["family"] == fam]
        rs = [r for r in rs if r["ratio"] is not None]
        if not rs:
            continue
        within = sum(r["ratio"] <= 1.10 for r in rs)
        worse = [r["ratio"] - 1 for r in rs if r["ratio"] > 1.10]
        rhos = [r["rho"] for r in rs if r["rho"] is not None]
        gain = f"{statistics.median(worse) * 100:.0f}%" if worse else "-"
        rho = f"{statistics.mean(rhos):+.2f}" if rhos else "-"
        print(f"{fam:<10} {len(rs):>7} {within:>9} ({within * 100 // len(rs):>3}%) {gain:>24} {rho:>9}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
