#!/usr/bin/env python3
"""Overhead of rfprof against native runs and ncu, measured in one run on one GPU (issue 8).

    bench/overhead.py --build build --out bench/results/h100-2026-11-22 [--repeats 3]

Runs each workload natively, under librfinject in each mode (timing; roofline: counters with
kernel replay; roofline-step-replay: replay across steps) and under ncu with the same metrics and
steps. Per workload: --warmup-runs native runs, not counted, then --repeats rounds of the
--repeat-modes (each round every one of them once, so that their samples interleave), then the
other modes once. Each run gets at most --timeout seconds and what is left of --budget (which
also counts the version queries); a run past it is stopped with its whole process group (under
ncu the application too). Writes into --out after every run, each file aside and renamed:
overhead.csv (workload,mode,wall_s,ratio_to_native: whole commands), steps.csv (main.py's step
times, on which issue 8's budget is judged for ResNet-18), runs.csv (every run and how it
ended), costs.csv (rfprof's own time per phase, from each rfprof mode's last trace), logs/,
traces/, analysis/, ncu/, and README.md (versions, commands, the tables, the budget, what was not
measured). What each file, column and check means: bench/README.md, section "overhead.py".

Exit status: 0; 1 when a workload's native runs have no run that exited 0 (no ratio and no budget
check can be judged against it), which includes "no result at all"; 2 on bad arguments;
128 + N after signal N (SIGINT or SIGTERM: the run in progress is stopped, nothing more runs, the
tables of what finished are written). Never changes clocks or any GPU setting; ncu runs with its
defaults --cache-control all --clock-control base spelled out. Standard library only; tested
without a GPU by tests/examples/test_bench_overhead.py.
"""
import argparse
import csv
import datetime
import io
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MODES = ["native", "timing", "roofline", "roofline-step-replay", "ncu"]
# Replay across steps needs one cudaProfilerStart/Stop window per step: only workloads started with
# profile-from-start off have them (main.py --window-per-step).
STEP_REPLAY_NEEDS_WINDOWS = ("replay across steps needs a workload with one cudaProfilerStart/Stop "
                             "window per step (profile-from-start off)")
RFPROF_MODES = ("timing", "roofline", "roofline-step-replay")
COUNTERS_MODES = ("roofline", "roofline-step-replay")
OVERHEAD_COLUMNS = ["workload", "mode", "wall_s", "ratio_to_native"]
RUN_COLUMNS = ["workload", "mode", "repeat", "wall_s", "exit_status", "command"]
STEP_COLUMNS = ["workload", "mode", "runs", "profiled_steps", "profiled_step_ms", "p10_ms", "p90_ms",
                "native_step_ms", "native_p10_ms", "native_p90_ms", "ratio_to_native", "profiled_sum_ms",
                "native_sum_ms", "sum_ratio_to_native", "unprofiled_step_ms"]
COST_COLUMNS = ["workload", "mode", "launches", "phase", "count", "total_ns", "mean_ns", "max_ns",
                "ns_per_launch"]
WARMUP = "warmup"          # runs.csv's repeat of a run that is not counted
INTERRUPT_GRACE_S = 3.0    # SIGTERM to SIGKILL for the run in progress when we are interrupted
LEFTOVER_GRACE_S = 2.0     # the same for what a run that exited left running in its group


def default_workloads(build, resnet_args):
    """name -> (command list, profile_from_start)."""
    return {
        "resnet18": ([sys.executable, os.path.join(ROOT, "examples", "imagenet", "main.py"), "-a", "resnet18",
                      "--dummy"] + shlex.split(resnet_args), False),
        # 20 steps of 1,000 launches, each step a profiling window with --window-per-step.
        "many_kernels": ([os.path.join(build, "bench", "many_kernels"), "--launches", "20000", "--steps", "20"],
                         False),
        "big_memory": ([os.path.join(build, "bench", "big_memory"), "--gib", "40", "--kernels", "20"], True),
        # Kernel replay's cost per launch against the device memory the process holds: the same
        # kernel 8 times while 1, 4 or 16 GiB are allocated (README "Launch calls").
        **{f"big_memory_{g}gib": ([os.path.join(build, "bench", "big_memory"), "--gib", str(g), "--kernels", "8"], True)
           for g in (1, 4, 16)},
        "cuda_init": ([os.path.join(build, "bench", "cuda_init")], True),
    }


def read_metrics():
    with open(os.path.join(ROOT, "scripts", "default-metrics.txt"), encoding="utf-8") as f:
        return [m.strip() for m in f if m.strip() and not m.startswith("#")]


def command_for(mode, workload, cmd, from_start, args, out):
    """(argv, extra environment) of one run. resnet18 gets the --resnet-args-for arguments of
    `mode` after its own (main.py takes the last of each option)."""
    env = {}
    if workload == "resnet18":
        cmd = cmd + shlex.split(" ".join(getattr(args, "resnet_args_for", {}).get(mode, [])))
    if mode in RFPROF_MODES:
        env = {"CUDA_INJECTION64_PATH": args.inject, "NVTX_INJECTION64_PATH": args.inject,
               "RFPROF_MODE": "timing" if mode == "timing" else "counters",
               "RFPROF_OUTPUT": trace_path(out, workload, mode),
               "RFPROF_FORCE_OVERWRITE": "1",
               "RFPROF_PROFILE_FROM_START": "on" if from_start else "off"}
        if mode == "roofline-step-replay":
            # The same steps, each its own window: pass 1, pass 2, then the timing window.
            env["RFPROF_REPLAY"] = "step"
            if os.environ.get("RFPROF_STEP_PASS_START"):  # the caller's A/B knob: step runs only
                env["RFPROF_STEP_PASS_START"] = os.environ["RFPROF_STEP_PASS_START"]
            extra = ["--window-per-step"]
            if workload == "resnet18":
                # The counters of one step need a window per pass and then the timing window (3 for
                # the default set's 2 passes): one group, whatever the other modes profile.
                extra += ["--profile-iters", str(getattr(args, "step_replay_steps", 3))]
            return cmd + extra, env
        return cmd, env
    if mode == "ncu":
        return ([args.ncu, "--metrics", ",".join(read_metrics()), "--target-processes", "all",
                 "--profile-from-start", "on" if from_start else "off", "--cache-control", "all",
                 "--clock-control", "base", "-f", "-o", os.path.join(out, "ncu", workload)] + cmd, env)
    return cmd, env


# --- Running commands: each in its own session, every wait bounded, SIGINT/SIGTERM polled ------

class Stop:
    """The first SIGINT or SIGTERM this process received (0: none). The handler only records it:
    every wait below polls it, so no exception lands in the middle of writing a file."""
    signum = 0


def on_signal(signum, frame):  # noqa: ARG001 (signal handler's signature)
    if not Stop.signum:
        Stop.signum = signum


def group_alive(pgid):
    """Whether a process of process group `pgid` still runs. Zombies do not count: they hold
    nothing, and where PID 1 reaps no orphan (containers) an orphan killed stays one for ever."""
    try:
        names = os.listdir("/proc")
    except OSError:
        names = None
    if not names or not os.path.exists("/proc/self/stat"):  # no /proc: ask the kernel
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # state ppid pgrp ...: after "(comm)"
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


def stop_group(pgid, grace):
    """SIGTERM to process group `pgid`, SIGKILL to what is left after `grace` seconds; waits at
    most grace + 5 s in all. True when nothing of the group runs any more."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if not group_alive(pgid):
            return True
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not group_alive(pgid):
                return True
            time.sleep(0.05)
    return not group_alive(pgid)


def run_process(argv, env, timeout, out_file, grace, what="", stderr=subprocess.STDOUT):
    """Runs argv in a session of its own (stdin /dev/null; stdout to the open file `out_file`, and
    stderr too unless `stderr` says otherwise) for at most `timeout` seconds. Returns (wall
    seconds, status): status is the exit status, "timeout" (stopped at `timeout`: the wall time
    is then a lower bound), "interrupted" (Stop.signum was set) or "cannot start: ...". Whatever
    is left of the process group after the command's end, its time limit or an interrupt is sent
    SIGTERM, then SIGKILL after a grace (`grace` seconds at the time limit)."""
    start = time.monotonic()
    try:
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out_file, stderr=stderr,
                             start_new_session=True)
    except OSError as e:
        return time.monotonic() - start, f"cannot start: {e.strerror}"
    # The exit time is taken by a thread blocked in waitpid, so that it is exact while this thread
    # polls the time limit and Stop.
    ended = []
    waiter = threading.Thread(target=lambda: (p.wait(), ended.append(time.monotonic())), daemon=True)
    waiter.start()
    deadline = start + timeout
    while True:
        waiter.join(0.05)
        if ended:
            wall, status, g = ended[0] - start, p.returncode, LEFTOVER_GRACE_S
            break
        now = time.monotonic()
        if Stop.signum:
            wall, status, g = now - start, "interrupted", min(grace, INTERRUPT_GRACE_S)
            break
        if now >= deadline:
            wall, status, g = now - start, "timeout", grace
            break
    if isinstance(status, int) and group_alive(p.pid):
        print(f"overhead: {what or argv[0]}: processes of its group still ran after it exited: stopping them",
              file=sys.stderr)
    if not stop_group(p.pid, g):
        print(f"overhead: {what or argv[0]}: processes of its group (id {p.pid}) still run after SIGKILL",
              file=sys.stderr)
    waiter.join(5.0)
    return wall, status


def run_one(argv, env, timeout, log, grace=10.0, what=""):
    """(wall seconds, status) of one run (run_process); stdout and stderr go to the file `log`."""
    full = dict(os.environ)
    full.pop("RFPROF_STEP_PASS_START", None)  # refused without RFPROF_REPLAY=step; command_for adds it back
    full.update(env)
    with open(log, "wb") as f:
        return run_process(argv, full, timeout, f, grace, what)


def command_output(argv, timeout=60):
    """stdout of a short command, or None when it could not run or did not exit 0."""
    with tempfile.TemporaryFile() as f:
        _, status = run_process(argv, None, timeout, f, 2.0, stderr=subprocess.DEVNULL)
        if status != 0:
            return None
        f.seek(0)
        return f.read().decode("utf-8", "replace")


def log_path(out, workload, mode, repeat):
    return os.path.join(out, "logs", f"{workload}-{mode}-{repeat}.log")


def first_rfprof_line(log):
    """The first line of `log` that rfprof wrote ("rfprof: ..."), or ""."""
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("rfprof:"):
                    return line.strip()
    except OSError:
        pass
    return ""


def last_line(log):
    """The last non-empty line of `log` (at most 200 characters), or ""."""
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


def write_atomic(path, text):
    """Writes `text` to path + ".tmp", then renames it: a reader (or an interrupt) never sees a
    half-written file, only the previous one or the new one."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def csv_text(columns, rows):
    buf = io.StringIO()
    wr = csv.DictWriter(buf, fieldnames=columns)
    wr.writeheader()
    wr.writerows(rows)
    return buf.getvalue()


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


# --- Counters and the collector's own costs, from each rfprof mode's last trace ---------------

def counter_coverage(out, workload, mode):
    """(launches, launches with counters, first collector error message) of one run, from the
    summary.json that collector_costs' rfanalyze wrote; None when there is none. Launches are the
    trace's LaunchApi records; those with counters are the ones not counted in
    join.rows_without_counters (docs/analyzer.md), none in a trace not in counters mode. Not
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


def trace_path(out, workload, mode):
    return os.path.join(out, "traces", f"{workload}-{mode}.rftrace")


def analysis_path(out, workload, mode):
    """rfanalyze's output folder for the trace of `mode`'s last run."""
    return os.path.join(out, "analysis", f"{workload}-{mode}")


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


VERSIONS_TIMEOUT_S = 15.0  # at most, for all the version queries together (they run at once)


def versions(args, timeout=VERSIONS_TIMEOUT_S):
    """GPU, driver, CUDA, ncu and torch versions: the last line each query printed, or why there is
    none. The queries (importing torch takes seconds; a broken ncu or driver can hang) run at
    once, each stopped after `timeout` seconds."""
    queries = {
        "GPU, driver": ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
        "CUDA": ["nvcc", "--version"],
        "ncu": [args.ncu, "--version"],
        "torch": [sys.executable, "-c", "import torch; print(torch.__version__)"],
    }
    found = {}

    def ask(key, argv):
        start = time.monotonic()
        text = command_output(argv, timeout=timeout)
        lines = text.strip().splitlines() if text else []
        if lines:
            found[key] = lines[-1]
        elif time.monotonic() - start >= timeout:
            found[key] = f"(not available: no answer in {timeout:g} s)"
        else:
            found[key] = "(not available)"
    threads = [threading.Thread(target=ask, args=kv, daemon=True) for kv in queries.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 10.0)  # run_process stops each within its timeout and a 2 s grace
    return {k: found.get(k, "(not available)") for k in queries}


# --- Issue 8's budget ---------------------------------------------------------------------------

BUDGET_TIMING_RATIO = 1.05     # timing-only mode within 5% of native on ResNet-18
BUDGET_ROOFLINE_RATIO = 2.5    # the roofline set within 2.5x of native on ResNet-18 steps
BUDGET_FASTER_THAN_NCU = 20.0  # at least 20x faster than ncu with the same metrics, same command
BUDGET_INIT_ADDED_S = 0.3      # less than 0.3 s added at CUDA initialization (cuda_init)
# What each ratio is (README's "check" column). Timing costs per step: the median of many steps.
# A roofline mode is judged on everything one step's counters cost it: kernel replay and ncu get
# every counter in each profiled step; replay across steps in one group of steps (a window per
# pass, then the timing window), all of which --step-replay-steps profiles.
TIMING_CHECK = "median profiled step / native's median over the same steps"
KERNEL_REPLAY_CHECK = "profiled steps summed / native's same steps summed"
STEP_REPLAY_CHECK = "profiled steps of one group (passes + timing window) summed / native's same steps summed"
NCU_CHECK = "ncu's ms per profiled step / this mode's ms per step of counters"
INIT_CHECK = "seconds added to CUDA initialization (whole command)"
NATIVE_CHECK = "every check (native is the reference)"
STEP_CHECKS = {"timing": (TIMING_CHECK, BUDGET_TIMING_RATIO),
               "roofline": (KERNEL_REPLAY_CHECK, BUDGET_ROOFLINE_RATIO),
               "roofline-step-replay": (STEP_REPLAY_CHECK, BUDGET_ROOFLINE_RATIO)}


def no_steps(whose):
    return f"no step times (main.py's \"step I: X ms\" lines) from {whose}"


def ms_per_step_of_counters(mode, s):
    """What one step's worth of counters costs `mode` in ms, from its step_summary() entry `s`:
    replay across steps, the sum of a run's profiled steps (one group); kernel replay and ncu,
    whose every profiled step has all the counters, that sum over their count. None without steps."""
    if not s or s["profiled_sum_ms"] is None or not s["per_step"]:
        return None
    return s["profiled_sum_ms"] if mode == "roofline-step-replay" else s["profiled_sum_ms"] / len(s["per_step"])


def each_step(s, most=8):
    """"3: 2555.55, 4: 60.55, 5: 60.60": the median of each profiled step; past `most` steps the
    first 3 and the last 2 (where a window opens and closes) and the count."""
    items = [f"{i}: {ms:.2f}" for i, ms in s["per_step"].items()]
    if len(items) <= most:
        return ", ".join(items)
    return ", ".join(items[:3] + ["..."] + items[-2:]) + f" ({len(items)} steps)"


def step_detail(mode, s):
    """README's "steps (ms)" beside a resnet18 check: what the judged ratio was computed from."""
    if mode == "timing":
        summed = s["sum_ratio_to_native"]
        return (f"median of {len(s['profiled'])} steps {s['profiled_step_ms']:.2f} (p10-p90 {s['p10_ms']:.2f}-"
                f"{s['p90_ms']:.2f}); native's of {len(s['native_same'])}: {s['native_step_ms']:.2f} "
                f"({s['native_p10_ms']:.2f}-{s['native_p90_ms']:.2f})"
                + ("" if summed is None else f"; summed, the window's opening and closing included: {summed:.3f}"))
    return f"{each_step(s)}; summed {s['profiled_sum_ms']:.2f}; native's summed {s['native_sum_ms']:.2f}"


def budget_checks(rows, steps=None, counters=None, missing=None):
    """Issue 8's budget: a list of (workload, mode, check, target, measured, steps, whole_command,
    met) where met is True/False, or None when not measured (measured then says why).

    resnet18 is judged on main.py's step times (`steps`: (workload, mode) -> step_summary()'s
    entry; `steps` column: what the ratio was computed from), with the same ratio of whole-command
    wall times (overhead.csv's `rows`) beside it, not judged (mostly ResNet-18's start-up):
    timing's median step over native's median over the same steps <= 1.05; each roofline mode's
    profiled steps summed over native's same steps summed <= 2.5 (kernel replay: its profiled
    step(s); replay across steps: its group, passes and timing window); ncu's ms per profiled step
    over the mode's ms per step of counters (ms_per_step_of_counters) >= 20. A roofline mode is
    judged only when `counters` ((workload, mode) -> counters_state()) says its trace holds
    counters. cuda_init: seconds added over native by timing and roofline < 0.3, to the
    millisecond of wall_s. `missing` ((workload, mode) -> why it has no row: Bench.missing()) turns
    a mode run without a result into "not measured" rows saying why; without native's row a
    workload gets one row saying the budget cannot be judged."""
    wall = {(r["workload"], r["mode"]): float(r["wall_s"]) for r in rows}
    given = {(r["workload"], r["mode"]): r["ratio_to_native"] for r in rows if r.get("ratio_to_native")}
    steps, counters, missing = steps or {}, counters or {}, missing or {}
    checks = []

    def ran(w, m):
        return (w, m) in wall or (w, m) in missing

    def not_measured(w, m, check, target, why, whole=""):
        checks.append((w, m, check, target, f"not measured: {why}", "", whole, None))

    def without_native(w):
        if (w, "native") in missing:
            not_measured(w, "native", NATIVE_CHECK, "",
                         f"the budget cannot be judged without native: {missing[(w, 'native')]}")

    without_native("resnet18")
    native = wall.get(("resnet18", "native"))
    ncu_key = ("resnet18", "ncu")
    for m, (check, limit) in STEP_CHECKS.items() if native else ():
        key, target = ("resnet18", m), f"<= {limit:g}"
        ncu_target = f">= {BUDGET_FASTER_THAN_NCU:g}"
        with_ncu = m in COUNTERS_MODES and ran(*ncu_key)
        if key in missing:
            not_measured("resnet18", m, check, target, f"{m}: {missing[key]}")
            if with_ncu:
                not_measured("resnet18", m, NCU_CHECK, ncu_target, f"{m}: {missing[key]}")
            continue
        if key not in wall:
            continue
        ok, note = counters.get(key, (None, "counters not checked")) if m in COUNTERS_MODES else (True, "")
        whole = given.get(key) or f"{wall[key] / native:.3f}"  # overhead.csv's
        s = steps.get(key)
        ratio = s and s["ratio_to_native" if m == "timing" else "sum_ratio_to_native"]
        if not ok:
            not_measured("resnet18", m, check, target, note, whole)
        elif not s:
            not_measured("resnet18", m, check, target, no_steps(f"{m}'s runs"), whole)
        elif ratio is None:
            not_measured("resnet18", m, check, target,
                         no_steps(f"native's runs for steps {index_ranges(s['per_step'])}"), whole)
        else:
            checks.append(("resnet18", m, check, target, f"{ratio:.3f}", step_detail(m, s), whole, ratio <= limit))
        if not with_ncu:
            continue
        if ncu_key in missing:
            not_measured("resnet18", m, NCU_CHECK, ncu_target, f"ncu: {missing[ncu_key]}")
            continue
        whole = f"{wall[ncu_key] / wall[key]:.2f}"
        theirs, mine = ms_per_step_of_counters("ncu", steps.get(ncu_key)), ms_per_step_of_counters(m, s)
        if not ok:
            not_measured("resnet18", m, NCU_CHECK, ncu_target, note, whole)
        elif theirs is None:
            not_measured("resnet18", m, NCU_CHECK, ncu_target, no_steps("ncu's run (its profiled steps)"), whole)
        elif not mine:
            not_measured("resnet18", m, NCU_CHECK, ncu_target, no_steps(f"{m}'s runs"), whole)
        else:
            faster = theirs / mine
            detail = (f"ncu {each_step(steps[ncu_key])} ({theirs:.2f} per step); this mode {mine:.2f} per step "
                      "of counters")
            checks.append(("resnet18", m, NCU_CHECK, ncu_target, f"{faster:.2f}", detail, whole,
                           faster >= BUDGET_FASTER_THAN_NCU))
    without_native("cuda_init")
    init = wall.get(("cuda_init", "native"))
    for m in ("timing", "roofline") if init is not None else ():
        key, target = ("cuda_init", m), f"< {BUDGET_INIT_ADDED_S:g}"
        if key in wall:
            added = round(wall[key] - init, 3)  # wall_s has ms resolution
            checks.append(("cuda_init", m, INIT_CHECK, target, f"{added:.3f}", "", "", added < BUDGET_INIT_ADDED_S))
        elif key in missing:
            not_measured("cuda_init", m, INIT_CHECK, target, f"{m}: {missing[key]}")
    return checks


# --- The invocation: its plan, its runs, its files ---------------------------------------------

def schedule(chosen, modes, workloads, repeats, repeat_modes, warmup_runs):
    """([(workload, mode, repeat)] in run order, [(workload, mode, why)] skipped). Per workload:
    `warmup_runs` native runs (repeat WARMUP, not counted), then `repeats` rounds of the modes in
    `repeat_modes`, each round every one of them once in `modes`' order, then the other modes
    once (repeat 0). roofline-step-replay is skipped on a workload without profiling windows."""
    plan, skipped = [], []
    for w in chosen:
        _, from_start = workloads[w]
        mine = []
        for m in modes:
            if m == "roofline-step-replay" and from_start:
                skipped.append((w, m, STEP_REPLAY_NEEDS_WINDOWS))
            else:
                mine.append(m)
        plan += [(w, "native", WARMUP)] * warmup_runs
        plan += [(w, m, r) for r in range(repeats) for m in mine if m in repeat_modes]
        plan += [(w, m, 0) for m in mine if m not in repeat_modes]
    return plan, skipped


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Bench:
    """What one invocation measured so far, and its files (write() after every run)."""

    def __init__(self, out, argv, args, chosen, modes, plan, skipped, versions_):
        self.out, self.argv, self.args, self.chosen, self.modes = out, argv, args, chosen, modes
        self.plan, self.skipped, self.versions = plan, skipped, versions_
        self.runs = []            # dicts: workload, mode, repeat, wall, exit_status, command, log
        self.not_run = {}         # (workload, mode) -> (count, why): counted runs never started
        self.costs, self.coverage, self.calls = [], {}, {}
        self.unanalyzed = {}      # (workload, mode) -> why its trace has no analysis
        self.analysis = "pending"  # "pending", "done", or why the traces were not analyzed

    def counted(self, w, m, ok_only=False):
        return [r for r in self.runs if r["workload"] == w and r["mode"] == m and r["repeat"] != WARMUP
                and (not ok_only or r["exit_status"] == 0)]

    def overhead_rows(self):
        """overhead.csv: the median wall time of each mode's counted runs that exited 0."""
        rows = []
        for w in self.chosen:
            ok = {m: [r["wall"] for r in self.counted(w, m, True)] for m in self.modes}
            native = statistics.median(ok["native"]) if ok.get("native") else None
            for m in self.modes:
                if ok[m]:
                    wall = statistics.median(ok[m])
                    rows.append({"workload": w, "mode": m, "wall_s": f"{wall:.3f}",
                                 "ratio_to_native": f"{wall / native:.3f}" if native else ""})
        return rows

    def missing(self):
        """(workload, mode) -> why a mode that was to be run has no overhead.csv row: "no run
        exited 0 (last: how it ended; its last line: ...)" or "not run: why"."""
        out = {}
        for w in self.chosen:
            for m in self.modes:
                mine = self.counted(w, m)
                if mine and not self.counted(w, m, True):
                    said = last_line(mine[-1]["log"]) if mine[-1].get("log") else ""
                    out[(w, m)] = (f"no run exited 0 (last: {run_outcome(mine[-1])}"
                                   + (f"; its last line: {said}" if said else "") + ")")
                elif not mine and (w, m) in self.not_run:
                    out[(w, m)] = f"not run: {self.not_run[(w, m)][1]}"
        return out

    def steps(self):
        samples = {}
        for w in self.chosen:
            for m in self.modes:
                samples[(w, m)] = [read_steps(r["log"]) for r in self.counted(w, m, True)]
        return step_summary(samples)

    def counters(self):
        """(workload, mode) -> counters_state() of each counters mode with a counted run."""
        out = {}
        for w in self.chosen:
            for m in COUNTERS_MODES:
                mine = self.counted(w, m)
                if not mine:
                    continue
                if self.analysis == "pending":
                    unchecked = "its trace is analyzed once every run has ended"
                elif self.analysis != "done":
                    unchecked = self.analysis
                else:
                    unchecked = self.unanalyzed.get((w, m), f"its trace could not be analyzed "
                                                            f"(logs/{w}-{m}-rfanalyze.log)")
                out[(w, m)] = counters_state(self.coverage.get((w, m)), mine[-1]["log"], unchecked)
        return out

    def write(self):
        """runs.csv, overhead.csv, steps.csv, costs.csv and README.md, each written aside and renamed."""
        out = self.out
        write_atomic(os.path.join(out, "runs.csv"), csv_text(RUN_COLUMNS, [
            {k: (f"{r['wall']:.3f}" if k == "wall_s" else r[k]) for k in RUN_COLUMNS} for r in self.runs]))
        rows = self.overhead_rows()
        write_atomic(os.path.join(out, "overhead.csv"), csv_text(OVERHEAD_COLUMNS, rows))
        steps = self.steps()
        write_atomic(os.path.join(out, "steps.csv"), csv_text(STEP_COLUMNS, step_rows(self.chosen, self.modes, steps)))
        write_atomic(os.path.join(out, "costs.csv"), csv_text(COST_COLUMNS, self.costs))
        write_atomic(os.path.join(out, "README.md"), self.readme(rows, steps))
        return rows

    # README.md: a function per section; what the columns mean is bench/README.md's ("overhead.py").

    def readme(self, rows, steps):
        counters, missing = self.counters(), self.missing()
        return "".join([self.readme_head(), self.whole_command_table(rows, counters), self.steps_table(steps),
                        self.budget_table(rows, steps, counters, missing), self.costs_table(), self.calls_table(),
                        self.not_measured_list(missing),
                        "\nEvery command with its environment, and every run with how it ended: runs.csv.\n"])

    def readme_head(self):
        args = self.args
        repeat_modes = [m for m in self.modes if m in args.repeat_modes]
        once = [m for m in self.modes if m not in args.repeat_modes]
        text = f"# rfprof overhead, {datetime.date.today().isoformat()}\n\n"
        text += "".join(f"- {k}: {val}\n" for k, val in self.versions.items())
        cmd = " ".join(shlex.quote(a) for a in (self.argv if self.argv is not None else sys.argv[1:]))
        text += (f"\nCommand: `bench/overhead.py {cmd}`: per workload {args.warmup_runs} native warm-up run(s), "
                 f"not counted, then {args.repeats} round(s) of {', '.join(repeat_modes) or 'no mode'} (each "
                 "round every one of them once, in this order)"
                 + (f", then {', '.join(once)} once" if once else "") + "; each figure is the median of a "
                 "mode's runs that exited 0. What each table, column and check means: bench/README.md, "
                 "section \"overhead.py\", in rfprof's sources.\n")
        if Stop.signum:
            text += (f"\n**Interrupted by {signal_name(Stop.signum)}** after {len(self.runs)} run(s): the run in "
                     "progress was stopped and nothing more was run; the tables hold the runs that ended before.\n")
        return text

    def whole_command_table(self, rows, counters):
        text = ("\n## Whole command (overhead.csv)\n\nStart to exit; for resnet18 mostly start-up, so its budget is "
                "judged on the steps below. A run stopped at its time limit ran at least wall_s.\n\n"
                "| workload | mode | wall_s | ratio_to_native | runs | note |\n|---|---|---|---|---|---|\n")
        by_key = {(r["workload"], r["mode"]): r for r in rows}
        natives = {r["workload"]: float(r["wall_s"]) for r in rows if r["mode"] == "native"}
        for w in self.chosen:
            for m in self.modes:
                mine, ok = self.counted(w, m), self.counted(w, m, True)
                if not mine:
                    continue
                # Whether it measured counters: only of a mode with a row (a wall time to judge).
                notes = [counters[(w, m)][1]] if (w, m) in by_key and (w, m) in counters else []
                other = [run_outcome(r) for r in mine if r["exit_status"] != 0]
                planned = sum(1 for x in self.plan if x[0] == w and x[1] == m and x[2] != WARMUP)
                runs = f"{len(ok)} of {planned}" if len(ok) != planned else str(len(ok))
                if other:
                    notes.append("; ".join(other))
                if (w, m) in self.not_run:
                    notes.append(f"{self.not_run[(w, m)][0]} not run: {self.not_run[(w, m)][1]}")
                if (w, m) in by_key:
                    r = by_key[(w, m)]
                    if len(ok) > 1:
                        notes.insert(0, "runs: " + " / ".join(f"{x['wall']:.3f}" for x in ok))
                    text += table_row([w, m, r["wall_s"], r["ratio_to_native"], runs, "; ".join(notes)])
                else:
                    longest = max(mine, key=lambda x: x["wall"])
                    lower = longest["exit_status"] in ("timeout", "interrupted")
                    wall = f">= {longest['wall']:.3f}" if lower else ""
                    ratio = f">= {longest['wall'] / natives[w]:.3f}" if lower and natives.get(w) else ""
                    text += table_row([w, m, wall, ratio, runs, "not in overhead.csv: " + "; ".join(notes)])
        return text

    def steps_table(self, steps):
        if not steps:
            return ""
        text = ("\n## Steps (steps.csv)\n\nexamples/imagenet/main.py's own step times, each from a synchronize "
                "before the step to the end of the cudaProfilerStop it makes (a profiler's work when a window "
                "opens or closes is in the step); p10-p90: 10th to 90th percentile of the steps, all runs "
                "pooled.\n\n"
                "| workload | mode | runs | profiled steps: median ms each | median step ms (p10-p90) | "
                "native, same steps: median ms (p10-p90) | median ratio | summed ms | native's same steps "
                "summed (ms) | summed ratio | unprofiled_step_ms |\n|---|---|---|---|---|---|---|---|---|---|---|\n")

        def ms(x):
            return "" if x is None else f"{x:.2f}"

        def spread(med, lo, hi):
            return "" if med is None else f"{med:.2f} ({lo:.2f}-{hi:.2f})"

        def ratio(x):
            return "" if x is None else f"{x:.3f}"
        for w in self.chosen:
            for m in self.modes:
                s = steps.get((w, m))
                if s:
                    text += table_row([w, m, s["runs"], each_step(s),
                                       spread(s["profiled_step_ms"], s["p10_ms"], s["p90_ms"]),
                                       spread(s["native_step_ms"], s["native_p10_ms"], s["native_p90_ms"]),
                                       ratio(s["ratio_to_native"]), ms(s["profiled_sum_ms"]), ms(s["native_sum_ms"]),
                                       ratio(s["sum_ratio_to_native"]), ms(s["unprofiled_step_ms"])])
        return text

    def budget_table(self, rows, steps, counters, missing):
        checks = budget_checks(rows, steps, counters, missing)
        if not checks:
            return ""
        text = ("\n## Against issue 8's budget\n\nresnet18 judged on its step times (Steps above), each check "
                "saying which ratio; \"whole command\": the same ratio of overhead.csv's wall times, not judged. "
                "A roofline mode is judged only when its trace holds counters.\n\n"
                "| workload | mode | check | target | measured (judged) | steps (ms) | whole command (not judged) "
                "| met |\n|---|---|---|---|---|---|---|---|\n")
        for w, m, check, target, measured, detail, whole, met in checks:
            verdict = "not measured" if met is None else ("yes" if met else "NO")
            text += table_row([w, m, check, target, measured, detail, whole, verdict])
        return text

    def costs_table(self):
        if not (self.costs or self.coverage):
            return ""
        text = ("\n## Where rfprof's own time went (costs.csv)\n\nFrom each rfprof mode's last trace (its "
                "ProfilerOverhead records); the per-launch figures are costs.csv's ns_per_launch.\n\n"
                "| workload | mode | launches | with counters | callbacks ns/launch "
                "| launch call under counters (ms) | decode ns/launch | write ns/launch | set-up ms |\n"
                "|---|---|---|---|---|---|---|---|---|\n")
        return text + "".join(table_row(r) for r in cost_summary(self.costs, self.coverage))

    def calls_table(self):
        if not self.calls:
            return ""
        text = ("\nLaunch calls (trace.json's launch API calls, in time order; under kernel replay a call holds its "
                "kernel's replay passes and memory save and restore, the first also the Range Profiler's set-up).\n\n"
                "| workload | mode | calls | first call (ms) | median of the others (ms) | longest (ms) |\n"
                "|---|---|---|---|---|---|\n")
        for (w, m), (n, first, median, longest) in self.calls.items():
            text += table_row([w, m, n, f"{first:.3f}", "" if median is None else f"{median:.3f}", f"{longest:.3f}"])
        return text

    def not_measured_list(self, missing):
        lines = [f"- {w}, {m}: {why}" for w, m, why in self.skipped]
        lines += [f"- {w}, {m}: {why}" for (w, m), why in missing.items()]
        if self.analysis not in ("pending", "done"):
            lines.append(f"- every rfprof run, per-phase costs: {self.analysis}")
        return "\n## Not measured\n\n" + "\n".join(lines) + "\n" if lines else ""


def table_row(cells):
    """A Markdown table row; a "|" in a cell (a log's last line) would split it."""
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |\n"


def run_outcome(run):
    """How a run that did not exit 0 ended, e.g. "stopped at its time limit after >= 200.000 s"."""
    status, wall = run["exit_status"], run["wall"]
    if status in ("timeout", "interrupted"):
        return f"{'stopped at its time limit' if status == 'timeout' else 'interrupted'} after >= {wall:.3f} s"
    if isinstance(status, int):
        return f"exited {status} after {wall:.3f} s"
    return str(status)


def parse_mode_args(ap, given):
    """--resnet-args-for MODE=ARGS, repeatable: mode -> [ARGS, ...]."""
    out = {}
    for g in given:
        mode, sep, extra = g.partition("=")
        if not sep or mode not in MODES:
            ap.error(f"--resnet-args-for {g!r}: expected MODE=ARGS with MODE one of {', '.join(MODES)}")
        out.setdefault(mode, []).append(extra)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build folder (librfinject.so, bench/)")
    ap.add_argument("--out", required=True, help="results folder, e.g. bench/results/h100-2026-11-22")
    ap.add_argument("--workloads", default="resnet18,many_kernels,big_memory,cuda_init")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--repeats", type=int, default=1,
                    help="rounds of the --repeat-modes per workload, each round every mode once, so that the "
                         "modes' runs interleave; the median of a mode's runs is reported (default 1)")
    ap.add_argument("--repeat-modes", help="the modes run in every round (default: all of --modes); the "
                                           "others run once, after the rounds (e.g. ncu and kernel replay, "
                                           "which take minutes)")
    ap.add_argument("--warmup-runs", type=int, default=1,
                    help="native runs of each workload before its counted runs, not counted (default 1)")
    ap.add_argument("--timeout", type=float, default=540, help="seconds per run before it is stopped")
    ap.add_argument("--kill-grace", type=float, default=10,
                    help="seconds between SIGTERM and SIGKILL to the process group of a run past its time "
                         "limit (default 10)")
    ap.add_argument("--budget", type=float, default=0,
                    help="seconds for all runs together (0: no limit): each run gets at most what is left, "
                         "and runs past it are skipped and listed; for machines lent 10 minutes a command")
    ap.add_argument("--min-run", type=float, default=1.0,
                    help="seconds: a run is not started with less than this left of --budget (default 1; "
                         "e.g. a resnet18 run's usual length, so none is started only to be stopped)")
    ap.add_argument("--inject", help="librfinject.so (default: BUILD/librfinject.so)")
    ap.add_argument("--ncu", default=shutil.which("ncu") or "ncu")
    ap.add_argument("--rfanalyze", help="rfanalyze, for the per-phase costs (default: BUILD/rfanalyze)")
    ap.add_argument("--resnet-args", default="--iters 12 --warmup 5 --profile-iters 5",
                    help="examples/imagenet/main.py's arguments after -a resnet18 --dummy")
    ap.add_argument("--resnet-args-for", action="append", default=[], metavar="MODE=ARGS",
                    help="more main.py arguments for MODE's resnet18 runs only, after --resnet-args (the last "
                         "of an option counts), e.g. native=\"--iters 23 --profile-iters 20\" and the same for "
                         "timing: many profiled steps where each costs a step's time, one where each costs "
                         "seconds (ncu, kernel replay); repeatable")
    ap.add_argument("--step-replay-steps", type=int, default=3,
                    help="resnet18's profiled steps (--profile-iters) under roofline-step-replay: one window per "
                         "pass, then the timing window (default 3: the default set's 2 passes); the steps "
                         "--resnet-args gives must leave room for them after its --warmup")
    ap.add_argument("--workload", action="append", default=[], metavar="NAME=COMMAND",
                    help="add or replace a workload (profile-from-start on), e.g. for tests")
    ap.add_argument("--windowed-workload", action="append", default=[], metavar="NAME=COMMAND",
                    help="add or replace a workload that opens its own cudaProfilerStart/Stop windows "
                         "(profile-from-start off) and takes --window-per-step (one window per step): "
                         "it runs in every mode, roofline-step-replay included")
    args = ap.parse_args(argv)
    args.inject = args.inject or os.path.join(args.build, "librfinject.so")
    args.resnet_args_for = parse_mode_args(ap, args.resnet_args_for)
    args.rfanalyze = args.rfanalyze or os.path.join(args.build, "rfanalyze")
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.warmup_runs < 0:
        ap.error("--warmup-runs must be at least 0")
    if args.step_replay_steps < 2:
        ap.error("--step-replay-steps must be at least 2 (a pass and the timing window)")
    if args.budget < 0 or args.timeout <= 0 or args.min_run <= 0:
        ap.error("--timeout and --min-run must be positive and --budget at least 0")
    if args.kill_grace < 0:
        ap.error("--kill-grace must be at least 0")
    workloads = default_workloads(args.build, args.resnet_args)
    for flag, given, from_start in (("--workload", args.workload, True),
                                    ("--windowed-workload", args.windowed_workload, False)):
        for w in given:
            name, sep, cmd = w.partition("=")
            if not sep or not name or not cmd:
                ap.error(f"{flag} {w!r}: expected NAME=COMMAND")
            workloads[name] = (shlex.split(cmd), from_start)
    chosen = [w for w in args.workloads.split(",") if w]
    modes = [m for m in args.modes.split(",") if m]
    for w in chosen:
        if w not in workloads:
            ap.error(f"--workloads: unknown workload {w!r} (known: {', '.join(workloads)})")
    for m in modes:
        if m not in MODES:
            ap.error(f"--modes: unknown mode {m!r} (known: {', '.join(MODES)})")
    if "native" not in modes:
        ap.error("--modes must include native (ratios are to the native run)")
    args.repeat_modes = modes if args.repeat_modes is None else [m for m in args.repeat_modes.split(",") if m]
    for m in args.repeat_modes:
        if m not in modes:
            ap.error(f"--repeat-modes: {m!r} is not one of --modes ({', '.join(modes)})")

    handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    Stop.signum = 0
    try:
        return run_bench(args, argv, workloads, chosen, modes)
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)


def run_bench(args, argv, workloads, chosen, modes):
    out = args.out
    for d in (out, os.path.join(out, "traces"), os.path.join(out, "ncu"), os.path.join(out, "logs")):
        os.makedirs(d, exist_ok=True)
    plan, skipped = schedule(chosen, modes, workloads, args.repeats, args.repeat_modes, args.warmup_runs)
    began = time.monotonic()  # --budget counts the version queries too
    asked = versions(args, min(VERSIONS_TIMEOUT_S, args.budget / 4) if args.budget else VERSIONS_TIMEOUT_S)
    bench = Bench(out, argv, args, chosen, modes, plan, skipped, asked)
    bench.write()
    for w, m, r in plan:
        why = None
        timeout = args.timeout
        if Stop.signum:
            why = f"interrupted by {signal_name(Stop.signum)}"
        elif args.budget:
            timeout = min(timeout, args.budget - (time.monotonic() - began))
            if timeout < args.min_run:
                why = f"the --budget of {args.budget:g} s was used up"
        if why:
            if r != WARMUP:
                count = bench.not_run.get((w, m), (0, why))[0]
                bench.not_run[(w, m)] = (count + 1, why)
            continue
        cmd, from_start = workloads[w]
        argv_, env = command_for(m, w, cmd, from_start, args, out)
        if m in RFPROF_MODES:  # a trace or analysis left by an earlier run must not be read as this one's
            for stale in (trace_path(out, w, m), trace_path(out, w, m) + ".part"):
                if os.path.exists(stale):
                    os.remove(stale)
            shutil.rmtree(analysis_path(out, w, m), ignore_errors=True)
        log = log_path(out, w, m, r)
        wall, status = run_one(argv_, env, timeout, log, args.kill_grace, what=f"{w} {m} #{r}")
        line = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + (" " if env else "") + shlex.join(argv_)
        bench.runs.append({"workload": w, "mode": m, "repeat": r, "wall": wall, "exit_status": status,
                           "command": line, "log": log})
        print(f"overhead: {w} {m} #{r}: {wall:.3f} s, exit {status}", file=sys.stderr)
        bench.write()

    if Stop.signum:
        bench.analysis = (f"not analyzed: interrupted by {signal_name(Stop.signum)} (the traces are in traces/, "
                          "for rfanalyze)")
    elif not os.access(args.rfanalyze, os.X_OK):
        bench.analysis = f"{args.rfanalyze} not found (--rfanalyze)"
    else:
        analyze_traces(bench, args, chosen, modes, began)
    rows = bench.write()
    print(f"overhead: {len(rows)} results in {os.path.join(out, 'overhead.csv')}", file=sys.stderr)
    if Stop.signum:
        print(f"overhead: interrupted by {signal_name(Stop.signum)}: the tables hold the runs that ended before",
              file=sys.stderr)
        return 128 + Stop.signum
    failed = {w: why for (w, m), why in bench.missing().items() if m == "native"}
    failed.update({w: "no counted native run" for w in chosen if not bench.counted(w, "native") and w not in failed})
    for w, why in failed.items():
        print(f"overhead: {w}, native: {why}: nothing of {w} can be judged against it (exit status 1)",
              file=sys.stderr)
    return 1 if failed or not rows else 0


def analyze_traces(bench, args, chosen, modes, began):
    """rfanalyze on each rfprof mode's last trace: costs.csv's rows, counters and launch calls."""
    out = args.out
    for w in chosen:
        for m in modes:
            if m not in RFPROF_MODES or not bench.counted(w, m) or Stop.signum:
                continue
            left = args.budget - (time.monotonic() - began) if args.budget else 600
            bench.costs += collector_costs(args.rfanalyze, out, w, m, timeout=max(left, 10))
            if not any(os.path.exists(trace_path(out, w, m) + ext) for ext in ("", ".part")):
                bench.unanalyzed[(w, m)] = f"its last run wrote no trace ({os.path.relpath(trace_path(out, w, m), out)})"
            cov = counter_coverage(out, w, m)
            if cov is not None:
                bench.coverage[(w, m)] = cov
            lc = launch_calls(out, w, m)
            if lc is not None:
                bench.calls[(w, m)] = lc
    bench.analysis = "done" if not Stop.signum else \
        f"analysis cut short: interrupted by {signal_name(Stop.signum)}"


if __name__ == "__main__":
    sys.exit(main())
