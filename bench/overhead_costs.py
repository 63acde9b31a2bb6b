"""Counters and the collector's own costs for bench/overhead.py, from each rfprof mode's last trace."""
import csv
import json
import os
import shutil
import statistics
import sys

from overhead_common import analysis_path, trace_path
from overhead_run import first_rfprof_line, last_line, run_process

# --- Counters and the collector's own costs, from each rfprof mode's last trace ---------------

def counter_coverage(out, workload, mode):
    """(launches, launches with counters, first collector error message) of one run, from the
    summary.json that collector_costs' rfanalyze wrote; None when there is none. Launches are the
    trace's LaunchApi records; those with counters are the ones not counted in
    join.rows_without_counters (docs/analyzer-outputs.md), none in a trace not in counters mode. Not
    totals.launches_with_counters: that counts launches with both FLOP and DRAM bytes, which a
    metric set without them never has."""
    try:
        with open(os.path.join(analysis_path(out, workload, mode), "summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
        launches = sum(int(t["launches"]) for t in summary["traces"])
        # A trace not in counters mode awaited no counters: none of its launches has any.
        without = sum(int(t["join"]["rows_without_counters"]) if t["mode"] == "counters" else int(t["launches"])
                      for t in summary["traces"])
        errors = [e["message"] for e in summary.get("collector_errors", [])]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return launches, max(launches - without, 0), errors[0] if errors else ""


def counters_state(cov, log, unchecked):
    """Whether a counters-mode run measured counters: (True, note) when its trace holds counters
    for some launch; (False, "no counters: WHY") when for none (WHY: the first rfprof: line of
    its log, else the trace's first collector error, else what the trace lacks); (None,
    "counters not checked: UNCHECKED") without an analysis of its trace (cov None)."""
    if cov is None:
        return None, f"counters not checked: {unchecked}"
    launches, with_counters, error = cov
    if with_counters > 0:
        return True, f"counters for {with_counters} of {launches} launches"
    why = first_rfprof_line(log) or error or ("its trace has no launch" if launches == 0
                                              else "no rfprof: message in its log")
    return False, f"no counters: {why} (0 of {launches} launches with counters)"




def ns_per_launch(phase, count, total_ns, launches):
    """A phase's time per launch, as costs.csv gives it and README.md's cost table reads it, or
    None without a divisor. Each phase by what its count means (docs/trace-format.md,
    collector/include/rfprof/collector/overhead.h): launch.callbacks counts the callbacks timed,
    entry and exit each once, one in 64 per thread in timing mode and every one in counters mode
    (launches outside the window included), so 2 * total / count; launch.counters counts the
    launch calls made under the Range Profiler: total / count; any other phase (set-up, decode,
    writing) is spread over the trace's launches (kernels.csv rows)."""
    count, total_ns = int(count), int(total_ns)
    if phase == "launch.callbacks":
        return 2 * total_ns / count if count else None
    if phase == "launch.counters":
        return total_ns / count if count else None
    return total_ns / launches if launches else None


def collector_costs(rfanalyze, out, workload, mode, timeout=600):
    """costs.csv rows of one rfprof run: rfanalyze on its trace (or the .part a stopped run left),
    then its profiler_overhead.csv, each phase with ns_per_launch(). [] when there is no trace or
    rfanalyze fails (its output: logs/WORKLOAD-MODE-rfanalyze.log); the reason is printed. The
    analysis an earlier invocation left in `out` is removed first, trace or not: counter_coverage()
    and launch_calls() read only what this run's trace gave."""
    dest = analysis_path(out, workload, mode)
    shutil.rmtree(dest, ignore_errors=True)
    trace = trace_path(out, workload, mode)
    if not os.path.exists(trace) and os.path.exists(trace + ".part"):
        trace += ".part"
    if not os.path.exists(trace):
        return []
    log = os.path.join(out, "logs", f"{workload}-{mode}-rfanalyze.log")
    with open(log, "wb") as f:
        _, status = run_process([rfanalyze, trace, "-o", dest], None, timeout, f, 2.0, what=f"rfanalyze {trace}")
    if status != 0:
        print(f"overhead: rfanalyze {trace}: exit {status}: {last_line(log)}", file=sys.stderr)
        return []
    try:
        with open(os.path.join(dest, "kernels.csv"), encoding="utf-8", newline="") as f:
            launches = max(sum(1 for _ in csv.reader(f)) - 1, 0)  # a quoted name may hold a newline
        with open(os.path.join(dest, "profiler_overhead.csv"), encoding="utf-8") as f:
            phases = list(csv.DictReader(f))
    except OSError as e:
        print(f"overhead: {dest}: {e}", file=sys.stderr)
        return []
    rows = []
    for r in phases:
        per = ns_per_launch(r["phase"], r["count"], r["total_ns"], launches)
        rows.append({"workload": workload, "mode": mode, "launches": launches, "phase": r["phase"],
                     "count": r["count"], "total_ns": int(r["total_ns"]), "mean_ns": r["mean_ns"],
                     "max_ns": r["max_ns"], "ns_per_launch": "" if per is None else f"{per:.1f}"})
    return rows


def launch_calls(out, workload, mode):
    """(calls, first call ms, median of the other calls ms, longest call ms) of one run: the launch
    API calls ("cuda_api" events) of the trace.json that collector_costs' rfanalyze wrote, in time
    order. Under kernel replay each call holds its kernel's replays and memory save and restore;
    the first also holds the Range Profiler's set-up. None without trace.json or calls."""
    try:
        with open(os.path.join(analysis_path(out, workload, mode), "trace.json"), encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        calls = sorted((float(e["ts"]), float(e["dur"]) / 1000.0) for e in events if e.get("cat") == "cuda_api")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not calls:
        return None
    rest = [d for _, d in calls[1:]]
    return len(calls), calls[0][1], statistics.median(rest) if rest else None, max(d for _, d in calls)


def cost_summary(rows, coverage=None):
    """README rows per run, from costs.csv's rows (their ns_per_launch, so that both say the same):
    launches, launches with counters ("k/n", counters modes, from `coverage`: (workload, mode) ->
    counter_coverage()), callbacks ns per launch (launch.callbacks), mean launch call under the
    Range Profiler (launch.counters, ms), decode and write ns per launch (sums of their phases),
    set-up ms (session start, counters set-up, Range Profiler enable)."""
    runs = {}
    for r in rows:
        runs.setdefault((r["workload"], r["mode"]), {"launches": r["launches"]})[r["phase"]] = r
    for key, cov in (coverage or {}).items():  # a trace without ProfilerOverhead records (format < 1.2)
        runs.setdefault(key, {"launches": cov[0]})

    def per_launch(run, *phases):  # blank when none of the phases has a value
        values = [float(run[p]["ns_per_launch"]) for p in phases if p in run and run[p]["ns_per_launch"] != ""]
        return sum(values) if values else None

    out = []
    for (w, m), run in runs.items():
        cb, lc = per_launch(run, "launch.callbacks"), per_launch(run, "launch.counters")
        decode = per_launch(run, "counters.decode", "counters.evaluate")
        write = per_launch(run, "writer.flush", "activity.buffer")
        setup = [int(run[p]["total_ns"]) for p in ("session.start", "counters.setup", "counters.enable") if p in run]
        cov = (coverage or {}).get((w, m))
        counted = f"{cov[1]}/{cov[0]}" if cov and m != "timing" else ""
        out.append([w, m, run["launches"], counted, "" if cb is None else f"{cb:.0f}",
                    "" if lc is None else f"{lc / 1e6:.4g}", "" if decode is None else f"{decode:.0f}",
                    "" if write is None else f"{write:.0f}",
                    f"{sum(setup) / 1e6:.1f}" if setup else ""])
    return out
