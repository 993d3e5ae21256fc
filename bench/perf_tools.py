#!/usr/bin/python3
"""Helpers for bench/*.sh (Debian's python3: numpy, h5py). Not part of the analysis package.

  perf_tools.py fedsilo-run RESULTS.h5 RSSPREFIX LABEL WORKLOAD RANKS -> one JSON line on stdout
  perf_tools.py torch-run TORCH.json LABEL WORKLOAD USAGEPREFIX  -> the same for torch_reference.py
  perf_tools.py compare RUNS.jsonl [FMA_PEAK.txt]                -> the fedsilo vs PyTorch table
  perf_tools.py tta-fedsilo RESULTS.h5 WORKLOAD TARGET WALL_S     -> one time-to-accuracy JSON line
  perf_tools.py tta-torch TORCH.json WORKLOAD TARGET WALL_S       -> the same for torch_reference.py
  perf_tools.py tta-report TTA.jsonl                             -> the time-to-accuracy table
  perf_tools.py scaling-row MODE RANKS CLIENTS RESULTS.h5 [OVERSUBSCRIBED] -> one CSV row
  perf_tools.py scaling-report SCALING.csv                       -> efficiency table
  perf_tools.py accuracy-run RESULTS.h5 WORKLOAD LABEL SEED       -> one accuracy JSON line
  perf_tools.py accuracy-report RUNS.jsonl                       -> variants against the first, over seeds
"""
import glob
import json
import math
import sys

import numpy as np

# Exact training FLOPs per sample (2 per multiply-add: forward, weight gradients, input gradients of
# every layer but the first), as bench/torch_reference.py and docs/performance.md count them.
TRAIN_FLOPS = {"w1": 879_200, "w2": 72_384_512, "pfl": 486_866_800}


def rank_usage(prefix):
    """Per-rank /usr/bin/time -f '%M %U %S %e' files PREFIX.<rank> -> list of dicts, rank order."""
    out = []
    for path in sorted(glob.glob(prefix + ".*"), key=lambda p: int(p.rsplit(".", 1)[1])):
        with open(path) as f:
            fields = None
            for line in f:  # the last line holds the figures (earlier ones: "Command exited ...")
                parts = line.split()
                if len(parts) == 4:
                    try:
                        fields = [float(x) for x in parts]
                    except ValueError:
                        pass
        if fields:
            out.append(dict(rank=int(path.rsplit(".", 1)[1]), rss_mb=fields[0] / 1024.0, user_s=fields[1],
                            sys_s=fields[2], wall_s=fields[3]))
    return out


def fedsilo_run(h5path, rssprefix, label, workload, num_ranks):
    import h5py

    with h5py.File(h5path, "r") as f:
        sec = [float(x) for x in f["/rounds/seconds"][:]]
        train = [float(x) for x in f["/rounds/train_seconds"][:]]
        acc = [float(x) for x in f["/rounds/global_accuracy"][:]]
        spr = float(f["/summary/seconds_per_round"][()])
        samples = int(f["/clients/num_train"][:].sum())  # every client trains one epoch per round here
    ranks = rank_usage(rssprefix)
    row = dict(program="fedsilo", label=label, workload=workload, cores=int(num_ranks), round_s=sec, train_s=train,
               rounds=len(sec), samples=samples,
               final_acc=acc[-1] if acc else float("nan"), median_round_s_all=spr,
               rss_mb=[r["rss_mb"] for r in ranks], cpu_s=[r["user_s"] + r["sys_s"] for r in ranks])
    print(json.dumps(row))


def torch_run(jsonpath, label, workload, usageprefix):
    """Last JSON line written by torch_reference.py --json -> one run line in the fedsilo format."""
    lines = [line for line in open(jsonpath) if line.strip()]
    t = json.loads(lines[-1])
    rows = t["per_round"]
    usage = rank_usage(usageprefix)
    print(json.dumps(dict(program="torch", label=label, workload=workload, cores=t["threads"],
                          round_s=[r["round_s"] for r in rows],
                          train_s=[r["train_s"] for r in rows], final_acc=t["final_test_acc"],
                          rss_mb=t["peak_rss_mb"], threads=t["threads"], blas_threads=t["openblas_threads"],
                          coretype=t["openblas_coretype"], rounds=len(rows), samples=t.get("samples_per_round", 60000),
                          cpu_s=[u["user_s"] + u["sys_s"] for u in usage])))


def med(v):
    return float(np.median(v)) if len(v) else float("nan")


def tagged_lines(path, tag, keys):
    """The key=value fields of each line of `path` that starts with `tag` and has every one of `keys`
    (the measurement lines compare_torch.sh collects in one file: 'fma_peak ...', 'vcpu_step ...')."""
    for line in open(path):
        if not line.startswith(tag + " "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        if set(keys) <= f.keys():
            yield f


def fma_peaks(path):
    """{threads: GFLOP/s} from fma_peak's 'fma_peak isa=I threads=T gflops=G' lines: the widest
    instruction set measured, the best of the measurements (the peak is the machine's, and a lower
    reading only means other work was running)."""
    best = {}
    for f in tagged_lines(path, "fma_peak", ("isa", "threads", "gflops")):
        key = (f["isa"] == "avx512", int(f["threads"]))
        best[key] = max(best.get(key, 0.0), float(f["gflops"]))
    wide = any(k[0] for k in best)
    return {t: g for (is512, t), g in best.items() if is512 == wide}


def vcpu_steps(path):
    """{when: {cpu: µs}} from compare_torch.sh's 'vcpu_step when=W cpu=C us=U' lines (the W1 training
    step timed on each vCPU the ranks use, before and after the runs)."""
    steps = {}
    for f in tagged_lines(path, "vcpu_step", ("when", "cpu", "us")):
        steps.setdefault(f["when"], {})[int(f["cpu"])] = float(f["us"])
    return steps


# Two vCPUs running the same step further apart than this are not the same machine for the run.
VCPU_SPREAD_NOTED = 1.05


def print_vcpu_steps(steps):
    """One line per measurement (before, after): the step's time on each vCPU, and a note when they
    differ by more than VCPU_SPREAD_NOTED."""
    if not steps:
        return
    print("W1 training step per vCPU (bench/step_bench.cpp, CPU time): " + "; ".join(
        f"{when} the runs " + ", ".join(f"vCPU {c} {us:.1f} µs" for c, us in sorted(by_cpu.items()))
        for when, by_cpu in steps.items()))
    spread = max(max(by_cpu.values()) / min(by_cpu.values()) for by_cpu in steps.values())
    if spread > VCPU_SPREAD_NOTED:
        print(f"  the vCPUs ran the same step up to x{spread:.2f} apart: the host slowed one of them (the FMA loop, "
              "and so the peak, does not show it), and every round of a run waits for its slowest rank")


def peak_for(peaks, cores):
    """Peak of `cores` cores: measured, else cores x the 1-thread figure; NaN without a measurement."""
    if cores in peaks:
        return peaks[cores]
    return cores * peaks[1] if 1 in peaks else float("nan")


def compare(path, peak_path=None):
    peaks = fma_peaks(peak_path) if peak_path else {}
    if peaks:
        print("\nFP32 FMA peak (best of the measurements before and after the runs): "
              + ", ".join(f"{t} core(s) {g:.1f} GFLOP/s" for t, g in sorted(peaks.items())))
    if peak_path:
        print_vcpu_steps(vcpu_steps(peak_path))
    runs = [json.loads(line) for line in open(path) if line.strip()]
    workloads = []
    for r in runs:
        if r["workload"] not in workloads:
            workloads.append(r["workload"])
    for wl in workloads:
        rows = {}
        order = []
        for r in runs:
            if r["workload"] != wl:
                continue
            key = r["label"]
            if key not in rows:
                rows[key] = dict(round_s=[], train_s=[], acc=[], rss=[], cpu=[], rep_sps=[], rep_cpu=[], reps=0,
                                 program=r["program"], cores=int(r.get("cores", 1)),
                                 samples=float(r.get("samples", 60000)))
                order.append(key)
            d = rows[key]
            d["round_s"] += r["round_s"]
            d["train_s"] += r["train_s"]
            d["rep_sps"].append(d["samples"] / med(r["train_s"]))
            d["rep_cpu"].append(max(r["cpu_s"]) if r.get("cpu_s") else None)
            d["acc"].append(r["final_acc"])
            d["rss"].append(max(r["rss_mb"]) if isinstance(r["rss_mb"], list) else r["rss_mb"])
            d["rss_per_rank"] = r["rss_mb"]
            if r.get("cpu_s"):
                d["cpu"].append(sum(r["cpu_s"]) / max(1, r.get("rounds", len(r["round_s"]))))
            d["reps"] += 1
        flops = TRAIN_FLOPS.get(wl, float("nan"))
        print(f"\n== {wl}: medians over all rounds of all repetitions ==")
        print(f"{'program':<46} {'reps':>4} {'s/round':>8} {'train s':>8} {'samples/s':>10} {'GFLOP/s':>8} "
              f"{'% peak':>6} {'final acc':>9} {'peak RSS MB':>14} {'CPU s/round':>11}")
        for key in order:
            d = rows[key]
            rss = d["rss_per_rank"]
            rss_txt = "/".join(f"{x:.0f}" for x in rss) if isinstance(rss, list) else f"{rss:.0f}"
            sps = d["samples"] / med(d["train_s"])
            gflops = sps * flops / 1e9
            share = 100.0 * gflops / peak_for(peaks, d["cores"]) if peaks else float("nan")
            print(f"{key:<46} {d['reps']:>4} {med(d['round_s']):>8.3f} {med(d['train_s']):>8.3f} "
                  f"{sps:>10.0f} {gflops:>8.1f} {share:>5.0f}% {med(d['acc']):>9.4f} {rss_txt:>14} "
                  f"{med(d['cpu']):>11.3f}")
        if peaks:
            print(f"  (GFLOP/s: training samples/s x {flops:,} exact FLOPs per sample; % peak: of the FMA peak of "
                  f"the cores the program used, fedsilo one per rank, PyTorch its threads)")
        print_repetitions(rows, order, flops, peaks)
        fed = [k for k in order if rows[k]["program"] == "fedsilo"]
        ref = [k for k in order if rows[k]["program"] == "torch"]
        for f in fed:
            for t in ref:
                a, b = rows[f], rows[t]
                sp = (a["samples"] / med(a["train_s"])) / (b["samples"] / med(b["train_s"]))
                rr = med(b["round_s"]) / med(a["round_s"])
                mem = max(a["rss"]) / max(b["rss"])
                cpu = med(b["cpu"]) / med(a["cpu"]) if a["cpu"] and b["cpu"] else float("nan")
                print(f"  {f} vs {t}: samples/s x{sp:.1f}, s/round x{rr:.1f} faster, "
                      f"accuracy {med(a['acc']) - med(b['acc']):+.4f}, peak RSS per process x{mem:.2f}, "
                      f"CPU per round x{cpu:.1f} less")
        # the other fedsilo builds and kernel sets against the first (this build, native, its best set)
        for f in fed[1:]:
            a, b = rows[f], rows[fed[0]]
            sp = (a["samples"] / med(a["train_s"])) / (b["samples"] / med(b["train_s"]))
            paired = ", ".join(f"x{x / y:.2f}" for x, y in zip(a["rep_sps"], b["rep_sps"]))
            print(f"  {f} vs {fed[0]}: samples/s x{sp:.2f} (repetition by repetition: {paired})")


def print_repetitions(rows, order, flops, peaks):
    """Each repetition's training samples/s (of its median round), share of the peak and CPU seconds
    (user + system, of the rank or process that used the most). The medians above pool all
    rounds; a repetition that another tenant of the host slowed shows up here as one low entry where the
    pooled median only drifts, and, since these guests report no steal time, as more CPU seconds for the
    same work, so a reader can tell the machine from the code."""
    if max(rows[k]["reps"] for k in order) < 2:
        return
    print("  per repetition (samples/s of its median round" + (", % of peak" if peaks else "")
          + ", CPU s of the rank or process that used the most)")
    for key in order:
        d = rows[key]
        cells = []
        for sps, cpu in zip(d["rep_sps"], d["rep_cpu"]):
            notes = []
            if peaks:
                notes.append(f"{100.0 * sps * flops / 1e9 / peak_for(peaks, d['cores']):.0f}%")
            if cpu is not None:
                notes.append(f"{cpu:.2f} CPU s")
            cells.append(f"{sps:,.0f}" + (f" ({', '.join(notes)})" if notes else ""))
        print(f"    {key}: " + ", ".join(cells))


def time_to_target(program, workload, target, accuracy, round_s, wall_s):
    """One time-to-accuracy JSON line: the first round (1-based) whose test accuracy is >= target and the
    wall seconds of the rounds up to and including it (training, aggregation and evaluation; the
    set-up before the first round is not counted, for either program); None where it was not reached."""
    target = float(target)
    hit = next((i for i, a in enumerate(accuracy) if a >= target), None)
    print(json.dumps(dict(program=program, workload=workload, target=target, rounds_run=len(accuracy),
                          rounds=None if hit is None else hit + 1,
                          seconds=None if hit is None else float(sum(round_s[:hit + 1])),
                          seconds_run=float(sum(round_s)),
                          best_acc=max(accuracy) if accuracy else float("nan"), process_wall_s=float(wall_s))))


def tta_fedsilo(h5path, workload, target, wall_s):
    import h5py

    with h5py.File(h5path, "r") as f:
        acc = [float(x) for x in f["/rounds/global_accuracy"][:]]
        sec = [float(x) for x in f["/rounds/seconds"][:]]
    time_to_target("fedsilo", workload, target, acc, sec, wall_s)


def tta_torch(jsonpath, workload, target, wall_s):
    lines = [line for line in open(jsonpath) if line.strip()]
    rows = json.loads(lines[-1])["per_round"]
    time_to_target("torch", workload, target, [r["test_acc"] for r in rows], [r["round_s"] for r in rows], wall_s)


def tta_report(path):
    runs = [json.loads(line) for line in open(path) if line.strip()]
    print(f"\n{'workload':<8} {'target':>6} {'fedsilo s':>10} {'rounds':>6} {'torch s':>10} {'rounds':>6} "
          f"{'torch/fedsilo':>13}   best accuracy (fedsilo / torch), rounds run, process wall s")
    for wl in dict.fromkeys(r["workload"] for r in runs):
        f = next((r for r in runs if r["workload"] == wl and r["program"] == "fedsilo"), None)
        t = next((r for r in runs if r["workload"] == wl and r["program"] == "torch"), None)
        if f is None or t is None:
            continue

        def cell(r):
            return (f"{r['seconds']:>10.1f} {r['rounds']:>6}" if r["rounds"]
                    else f"{'>' + format(r['seconds_run'], '.1f'):>10} {'>' + str(r['rounds_run']):>6}")

        ratio = f"{t['seconds'] / f['seconds']:>13.2f}" if f["rounds"] and t["rounds"] else f"{'n/a':>13}"
        print(f"{wl:<8} {f['target']:>6.2f} {cell(f)} {cell(t)} {ratio}   {f['best_acc']:.4f} / {t['best_acc']:.4f}, "
              f"{f['rounds_run']} / {t['rounds_run']}, {f['process_wall_s']:.0f} / {t['process_wall_s']:.0f}")
    print("  (seconds: wall time of the rounds up to the first whose test accuracy reaches the target, training,"
          " aggregation and evaluation; '>': not reached within the round cap)")


def scaling_row(mode, ranks, clients, h5path, over="0"):
    import h5py

    with h5py.File(h5path, "r") as f:
        spr = float(f["/summary/seconds_per_round"][()])
        samples = int(f["/clients/num_train"][:].sum())  # every client trains one epoch per round here
    print(f"{mode},{ranks},{clients},{spr:.6f},{over}")


def scaling_report(path):
    """Repeated (mode, ranks) rows are reduced to their median, as analysis' `plot scaling` does."""
    import csv

    rows = list(csv.DictReader(open(path)))
    for mode in ("strong", "weak"):
        by = {}
        for r in rows:
            if r["mode"] == mode:
                d = by.setdefault(int(r["ranks"]), dict(t=[], clients=r["clients"], over=r.get("oversubscribed", "0")))
                d["t"].append(float(r["seconds_per_round"]))
        if not by:
            continue
        ps = sorted(by)
        p0 = ps[0]
        t0 = med(by[p0]["t"])
        print(f"\n{mode} scaling (efficiency vs {p0} rank(s): strong p0*t0/(p*tp), weak t0/tp; medians of "
              f"{len(by[p0]['t'])} repetition(s))")
        # Also the best (minimum) of the repetitions: on a shared machine the least disturbed run.
        b0 = min(by[p0]["t"])
        print(f"{'ranks':>5} {'clients':>7} {'s/round':>9} {'speedup':>8} {'efficiency':>10} {'best s/round':>13} "
              f"{'best eff.':>9}")
        for p in ps:
            t, tb = med(by[p]["t"]), min(by[p]["t"])
            sp = t0 / t
            eff = (p0 * t0) / (p * t) if mode == "strong" else sp
            effb = (p0 * b0) / (p * tb) if mode == "strong" else b0 / tb
            flag = "  (oversubscribed: more ranks than cores)" if by[p]["over"] == "1" else ""
            print(f"{p:>5} {by[p]['clients']:>7} {t:>9.3f} {sp:>8.2f} {100 * eff:>9.0f}% {tb:>13.3f} {100 * effb:>8.0f}%{flag}")


def accuracy_run(h5path, workload, label, seed):
    """The run's score: the global model's test accuracy at the end for W1/W2 (FedAvg, the clients share
    the test set), the mean client test accuracy of the selected snapshots for the PLayer-FL protocol."""
    import h5py
    key = "mean" if workload == "pfl" else "global_accuracy"
    with h5py.File(h5path, "r") as f:
        acc = float(f["/summary/" + key][()])
    print(json.dumps({"workload": workload, "variant": label, "seed": int(seed), "accuracy": acc}))


def accuracy_report(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print(f"{'workload':8} {'variant':16} {'seeds':>5} {'mean':>8} {'sd':>8} {'mean diff':>10} {'max |diff|':>10}")
    for wl in dict.fromkeys(r["workload"] for r in rows):
        runs = [r for r in rows if r["workload"] == wl]
        variants = list(dict.fromkeys(r["variant"] for r in runs))
        score = {(r["variant"], r["seed"]): r["accuracy"] for r in runs}
        seeds = sorted({r["seed"] for r in runs})
        for v in variants:
            acc = np.array([score[(v, s)] for s in seeds if (v, s) in score])
            sd = acc.std(ddof=1) if len(acc) > 1 else float("nan")
            diff = np.array([score[(v, s)] - score[(variants[0], s)] for s in seeds
                             if (v, s) in score and (variants[0], s) in score])
            d = (f"{100 * diff.mean():+9.2f}p {100 * abs(diff).max():9.2f}p" if v != variants[0] and len(diff)
                 else f"{'':>10} {'':>10}")
            print(f"{wl:8} {v:16} {len(acc):5d} {acc.mean():8.4f} {sd:8.4f} {d}")
    print("  (diff: the variant's accuracy minus the first variant's on the same seed, in points)")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "fedsilo-run":
        fedsilo_run(*sys.argv[2:7])
    elif cmd == "torch-run":
        torch_run(*sys.argv[2:6])
    elif cmd == "compare":
        compare(*sys.argv[2:4])
    elif cmd == "tta-fedsilo":
        tta_fedsilo(*sys.argv[2:6])
    elif cmd == "tta-torch":
        tta_torch(*sys.argv[2:6])
    elif cmd == "tta-report":
        tta_report(sys.argv[2])
    elif cmd == "scaling-row":
        scaling_row(*sys.argv[2:])
    elif cmd == "scaling-report":
        scaling_report(sys.argv[2])
    elif cmd == "accuracy-run":
        accuracy_run(*sys.argv[2:6])
    elif cmd == "accuracy-report":
        accuracy_report(sys.argv[2])
    elif cmd == "rank-usage":
        print(json.dumps(rank_usage(sys.argv[2])))
    else:
        sys.exit(f"unknown command {cmd}")
