"""Step times for bench/overhead.py: examples/imagenet/main.py's own lines, summed and compared with native's."""
import re
import statistics

from overhead_common import STEP_COLUMNS

# --- Step times: examples/imagenet/main.py's own lines ---------------------------------------

# main.py prints after each step "step 3: 11.05 ms, loss 7.0232" and " (profiled)" at the end for
# the steps between its cudaProfilerStart and cudaProfilerStop. The time runs from a synchronize
# before the step (and before the cudaProfilerStart it makes) to the end of the cudaProfilerStop
# it makes, after a synchronize: a profiler's window work (a pass ended, an image decoded) is in it.
STEP_LINE = re.compile(r"step (\d+): (\d+(?:\.\d*)?) ms\b(.*)")


def read_steps(log):
    """{step index: (ms, profiled)} from main.py's step lines in `log`; {} without any."""
    steps = {}
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = STEP_LINE.fullmatch(line.strip())
                if m:
                    steps[int(m.group(1))] = (float(m.group(2)), m.group(3).rstrip().endswith("(profiled)"))
    except OSError:
        pass
    return steps


def index_ranges(indexes):
    """"3", "3-5" or "1;3-5" for sorted step indexes."""
    parts, start, prev = [], None, None
    for i in sorted(indexes):
        if start is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ";".join(parts)


def percentile(values, p):
    """The p-th percentile (0-100) of `values`, interpolated between the two nearest ranks."""
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def step_summary(samples):
    """(workload, mode) -> its step times, from `samples`: (workload, mode) -> [read_steps() of
    each counted run that exited 0]. Modes without step lines are absent. Each entry:
      runs             runs with step lines
      per_step         profiled index -> median ms over the runs
      profiled         every profiled step of every run (pooled), ms
      native_same      native's steps at the same indexes, every run pooled (None unless native
                       has each index, whether it marked it profiled or not)
      profiled_step_ms, p10_ms, p90_ms: median, 10th and 90th percentile of `profiled`
      native_step_ms, native_p10_ms, native_p90_ms: the same of `native_same`
      ratio_to_native  profiled_step_ms / native_step_ms (timing's check: the median of many steps)
      profiled_sum_ms  a run's profiled steps summed, median over the runs
      native_sum_ms    native's same steps summed per run (its runs having all of them), median
      sum_ratio_to_native  profiled_sum_ms / native_sum_ms (the roofline modes' check: all the
                       steps a step's counters cost)
      unprofiled_step_ms  median of the steps not profiled but each run's first (set-up)."""
    by_index, runs_of, unprofiled = {}, {}, {}
    for key, per_run in samples.items():
        for steps in per_run:
            if not steps:
                continue
            runs_of.setdefault(key, []).append(steps)
            first = min(steps)
            for i, (ms, prof) in steps.items():
                by_index.setdefault(key, {}).setdefault(i, []).append(ms)
                if not prof and i != first:
                    unprofiled.setdefault(key, []).append(ms)
    out = {}
    for key, runs in runs_of.items():
        prof = {}
        for steps in runs:
            for i, (ms, p) in steps.items():
                if p:
                    prof.setdefault(i, []).append(ms)
        mine = [ms for i in sorted(prof) for ms in prof[i]]
        sums = [sum(ms for ms, p in steps.values() if p) for steps in runs if any(p for _, p in steps.values())]
        native_runs = runs_of.get((key[0], "native"), [])
        native = by_index.get((key[0], "native"), {})
        have = bool(prof) and all(i in native for i in prof)
        same = [ms for i in sorted(prof) for ms in native.get(i, [])] if have else None
        native_sums = [sum(steps[i][0] for i in prof) for steps in native_runs
                       if prof and all(i in steps for i in prof)]
        e = {"runs": len(runs), "per_step": {i: statistics.median(prof[i]) for i in sorted(prof)},
             "profiled": mine, "native_same": same,
             "profiled_step_ms": statistics.median(mine) if mine else None,
             "p10_ms": percentile(mine, 10) if mine else None, "p90_ms": percentile(mine, 90) if mine else None,
             "native_step_ms": statistics.median(same) if same else None,
             "native_p10_ms": percentile(same, 10) if same else None,
             "native_p90_ms": percentile(same, 90) if same else None,
             "profiled_sum_ms": statistics.median(sums) if sums else None,
             "native_sum_ms": statistics.median(native_sums) if native_sums else None,
             "unprofiled_step_ms": statistics.median(unprofiled[key]) if unprofiled.get(key) else None}
        e["ratio_to_native"] = (e["profiled_step_ms"] / e["native_step_ms"]
                                if e["profiled_step_ms"] is not None and e["native_step_ms"] else None)
        e["sum_ratio_to_native"] = (e["profiled_sum_ms"] / e["native_sum_ms"]
                                    if e["profiled_sum_ms"] is not None and e["native_sum_ms"] else None)
        out[key] = e
    return out


def step_rows(chosen, modes, summary):
    """steps.csv's rows, in the order of overhead.csv's."""
    def f(x, spec):
        return "" if x is None else format(x, spec)
    rows = []
    for w in chosen:
        for m in modes:
            s = summary.get((w, m))
            if s:
                row = {"workload": w, "mode": m, "runs": s["runs"], "profiled_steps": index_ranges(s["per_step"])}
                for col in STEP_COLUMNS[4:]:
                    row[col] = f(s[col], ".3f" if "ratio" in col else ".2f")
                rows.append(row)
    return rows
