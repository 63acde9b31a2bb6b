#!/usr/bin/env python3
"""Overhead of rfprof against native runs and ncu, measured in one run on one GPU (issue 8).

    bench/overhead.py --build build --out bench/results/h100-2026-11-22 [--repeats 3]

runs every workload natively, under librfinject in each mode and under ncu with the same metrics
and the same steps. Per workload: --warmup-runs native runs that are not counted (the first run
of a machine pays for cold caches and a cold GPU), then --repeats rounds in which each mode of
--repeat-modes (default: all) runs once, in --modes order (the modes' samples interleave, so a
drift of the machine spreads over all of them), then the other modes once. Each run gets at most
--timeout seconds (and what is left of --budget); a run past it has its whole process group
(its own session: under ncu the application too) sent SIGTERM, then SIGKILL after --kill-grace
seconds. Writes into --out, after every run (each file written aside and renamed):
  overhead.csv  workload,mode,wall_s,ratio_to_native: the median wall time of the whole command
                (start to exit, time.monotonic) over the mode's counted runs that exited 0, and its
                ratio to native's median in this invocation. A mode none of whose runs exited 0
                (failed, stopped at its time limit) has no row: wall_s stays a number; README.md
                and runs.csv give such runs with their status and how long they ran.
  steps.csv     workload,mode,runs,profiled_steps,profiled_step_ms,native_step_ms,ratio_to_native,
                unprofiled_step_ms: the workload's own step times, from examples/imagenet/main.py's
                lines "step I: X ms, loss L[ (profiled)]" in each counted run that exited 0:
                profiled_step_ms the median of the steps marked "(profiled)" (all runs pooled),
                native_step_ms native's median over the same step indexes, ratio_to_native their
                ratio, unprofiled_step_ms the median of the other steps but each run's first
                (CUDA and cuDNN set-up). Only workloads that print such lines have rows (resnet18).
  runs.csv      every run: workload,mode,repeat,wall_s,exit_status,command (repeat "warmup": not
                counted; exit_status "timeout": stopped at its time limit, wall_s then a lower
                bound; "interrupted": stopped by SIGINT/SIGTERM)
  logs/         each run's stdout and stderr (WORKLOAD-MODE-REPEAT.log), with rfprof's own messages
  costs.csv     workload,mode,launches,phase,count,total_ns,mean_ns,max_ns,ns_per_launch: where each
                rfprof mode's own time went, per phase, from the trace of its last run
                (ProfilerOverhead records: rfanalyze's profiler_overhead.csv; a run stopped at its
                time limit is read from its .part trace, which holds the totals of its last flush).
                ns_per_launch (ns_per_launch()): launch.callbacks 2 * total / count (count is the
                callbacks timed: entry and exit each, one in 64 per thread in timing mode, every
                one in counters mode), launch.counters total / count (launch calls under the Range
                Profiler), other phases total / launches (kernels.csv rows); README.md's cost
                table reads these values.
  README.md     GPU, driver, CUDA, ncu and torch versions, the commands, the tables, issue 8's
                budget judged on the step times (the whole-command ratios beside them), what was
                not measured
A roofline or roofline-step-replay run whose trace holds counters for none of its launches (CUPTI
refused them, no step-replay group completed, ...) keeps its wall time row but is marked "no
counters: <its first rfprof: line>", and the budget checks of counters say "not measured"; so do
they while its trace was not analyzed.
  traces/       the rfprof traces written, analysis/ their rfanalyze outputs, ncu/ the ncu reports
SIGINT or SIGTERM stops the run in progress (its process group, as at a time limit), runs nothing
more, writes the tables and README.md of what finished and exits 128 + the signal's number; the
per-phase analysis of the traces is then not run.

Workloads (--workloads): resnet18 (examples/imagenet/main.py, --dummy, cudaProfilerStart/Stop
around --profile-iters steps), many_kernels (tiny kernels back to back), big_memory (tens of GiB
held), cuda_init (CUDA initialization alone); not run by default: big_memory_1gib, _4gib, _16gib
(one kernel 8 times while 1, 4 or 16 GiB are held: kernel replay's cost per launch against the
memory held, README's "Launch calls" table). Modes (--modes): native, timing, roofline (kernel
replay), roofline-step-replay (RFPROF_REPLAY=step, the workload's --window-per-step: one pass per step;
only for workloads with profiling windows: resnet18, many_kernels, and any given with
--windowed-workload), ncu. A mode that cannot run on a workload is
listed as skipped in README.md, never silently dropped.
Never changes clocks or any GPU setting; ncu runs with --cache-control all --clock-control base,
its defaults, spelled out so the commands say which settings each number used.
Standard library only; tested without a GPU by tests/examples/test_bench_overhead.py.
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
STEP_COLUMNS = ["workload", "mode", "runs", "profiled_steps", "profiled_step_ms", "native_step_ms",
                "ratio_to_native", "unprofiled_step_ms"]
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
    """(argv, extra environment) of one run."""
    env = {}
    if mode in ("timing", "roofline", "roofline-step-replay"):
        env = {"CUDA_INJECTION64_PATH": args.inject, "NVTX_INJECTION64_PATH": args.inject,
               "RFPROF_MODE": "timing" if mode == "timing" else "counters",
               "RFPROF_OUTPUT": os.path.join(out, "traces", f"{workload}-{mode}.rftrace"),
               "RFPROF_FORCE_OVERWRITE": "1",
               "RFPROF_PROFILE_FROM_START": "on" if from_start else "off"}
        if mode == "roofline-step-replay":
            # The same steps, each its own window: pass 1, pass 2, then the timing window.
            env["RFPROF_REPLAY"] = "step"
            if os.environ.get("RFPROF_STEP_PASS_START"):  # the caller's A/B knob: step runs only
                env["RFPROF_STEP_PASS_START"] = os.environ["RFPROF_STEP_PASS_START"]
            extra = ["--window-per-step"]
            if workload == "resnet18":
                # Counters of one step need a window per pass and then the timing window (3 for
                # the default set's 2 passes), where the other modes profile --resnet-args' steps:
                # main.py takes the last --profile-iters. Native runs do not depend on it.
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


def step_summary(samples):
    """(workload, mode) -> its step times, from `samples`: (workload, mode) -> [read_steps() of
    each counted run that exited 0]. Each entry: runs (with step lines), per_step (profiled index
    -> median ms over the runs), profiled_step_ms (median of all profiled steps of all runs),
    native_step_ms (native's median over the same indexes, every one of them present in native's
    runs, whether native marked them profiled or not), ratio_to_native, unprofiled_step_ms (median
    of the steps not profiled but each run's first). Modes without step lines are absent."""
    by_index, profiled, unprofiled, runs = {}, {}, {}, {}
    for key, per_run in samples.items():
        for steps in per_run:
            if not steps:
                continue
            runs[key] = runs.get(key, 0) + 1
            first = min(steps)
            for i, (ms, prof) in steps.items():
                by_index.setdefault(key, {}).setdefault(i, []).append(ms)
                if prof:
                    profiled.setdefault(key, {}).setdefault(i, []).append(ms)
                elif i != first:
                    unprofiled.setdefault(key, []).append(ms)
    out = {}
    for key in runs:
        prof = profiled.get(key, {})
        mine = [ms for i in sorted(prof) for ms in prof[i]]
        native = by_index.get((key[0], "native"), {})
        same = [ms for i in sorted(prof) for ms in native.get(i, [])]
        step_ms = statistics.median(mine) if mine else None
        native_ms = statistics.median(same) if prof and all(i in native for i in prof) else None
        out[key] = {"runs": runs[key], "per_step": {i: statistics.median(prof[i]) for i in sorted(prof)},
                    "profiled_step_ms": step_ms, "native_step_ms": native_ms,
                    "ratio_to_native": step_ms / native_ms if step_ms is not None and native_ms else None,
                    "unprofiled_step_ms": statistics.median(unprofiled[key]) if unprofiled.get(key) else None}
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
                rows.append({"workload": w, "mode": m, "runs": s["runs"], "profiled_steps": index_ranges(s["per_step"]),
                             "profiled_step_ms": f(s["profiled_step_ms"], ".2f"),
                             "native_step_ms": f(s["native_step_ms"], ".2f"),
                             "ratio_to_native": f(s["ratio_to_native"], ".3f"),
                             "unprofiled_step_ms": f(s["unprofiled_step_ms"], ".2f")})
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
        with open(os.path.join(out, "analysis", f"{workload}-{mode}", "summary.json"), encoding="utf-8") as f:
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
    rfanalyze fails (its output: logs/WORKLOAD-MODE-rfanalyze.log); the reason is printed."""
    trace = trace_path(out, workload, mode)
    if not os.path.exists(trace) and os.path.exists(trace + ".part"):
        trace += ".part"
    if not os.path.exists(trace):
        return []
    dest = os.path.join(out, "analysis", f"{workload}-{mode}")
    shutil.rmtree(dest, ignore_errors=True)  # an earlier invocation's outputs are not this trace's
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
        with open(os.path.join(out, "analysis", f"{workload}-{mode}", "trace.json"), encoding="utf-8") as f:
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


def versions(args):
    def last(cmd):
        text = command_output(cmd, timeout=60)
        lines = text.strip().splitlines() if text else []
        return lines[-1] if lines else "(not available)"
    return {
        "GPU, driver": last(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]),
        "CUDA": last(["nvcc", "--version"]),
        "ncu": last([args.ncu, "--version"]),
        "torch": last([sys.executable, "-c", "import torch; print(torch.__version__)"]),
    }


# --- Issue 8's budget ---------------------------------------------------------------------------

BUDGET_TIMING_RATIO = 1.05     # timing-only mode within 5% of native on ResNet-18
BUDGET_ROOFLINE_RATIO = 2.5    # the roofline set within 2.5x of native on ResNet-18 steps
BUDGET_FASTER_THAN_NCU = 20.0  # at least 20x faster than ncu with the same metrics, same command
BUDGET_INIT_ADDED_S = 0.3      # less than 0.3 s added at CUDA initialization (cuda_init)
STEP_CHECK = "profiled step / native's same steps"
NCU_CHECK = "ncu's profiled step / this mode's"
INIT_CHECK = "seconds added to CUDA initialization (whole command)"
NO_STEPS = ("no step times (main.py's \"step I: X ms\" lines) for this mode's profiled steps or for native's "
            "same steps")


def budget_checks(rows, steps=None, counters=None, unfinished=None):
    """Issue 8's budget: a list of (workload, mode, check, target, measured, whole_command, met)
    where met is True/False, or None when not measured (measured then says why).

    resnet18, judged on main.py's step times (`steps`: (workload, mode) -> step_summary()'s
    entry), with the same ratio of whole-command wall times (overhead.csv's `rows`) beside it as
    whole_command, not judged (that is mostly ResNet-18's start-up): timing's profiled steps over
    native's same steps <= 1.05; each roofline mode's <= 2.5; ncu's profiled step over each
    roofline mode's >= 20. A roofline mode's checks are judged only when `counters` ((workload,
    mode) -> counters_state()) says its trace holds counters; otherwise "not measured" with the
    reason (no counters, or not checked). cuda_init: seconds added over native by timing and
    roofline < 0.3, to the millisecond of wall_s (whole_command ""). A check needs native's row
    and the mode's; `unfinished` ((workload, mode) -> why it has no row) names ncu's timeout in
    the "faster than ncu" checks."""
    wall = {(r["workload"], r["mode"]): float(r["wall_s"]) for r in rows}
    given = {(r["workload"], r["mode"]): r["ratio_to_native"] for r in rows if r.get("ratio_to_native")}
    steps, counters, unfinished = steps or {}, counters or {}, unfinished or {}

    def step(m, field):
        s = steps.get(("resnet18", m))
        return s.get(field) if s else None

    checks = []
    native = wall.get(("resnet18", "native"))
    if native:
        for m, target in (("timing", BUDGET_TIMING_RATIO), ("roofline", BUDGET_ROOFLINE_RATIO),
                          ("roofline-step-replay", BUDGET_ROOFLINE_RATIO)):
            if ("resnet18", m) not in wall:
                continue
            ok, note = counters.get(("resnet18", m), (None, "counters not checked")) if m in COUNTERS_MODES \
                else (True, "")
            whole = given.get(("resnet18", m)) or f"{wall[('resnet18', m)] / native:.3f}"  # overhead.csv's
            ratio = step(m, "ratio_to_native")
            if not ok:
                checks.append(("resnet18", m, STEP_CHECK, f"<= {target:g}", f"not measured: {note}", whole, None))
            elif ratio is None:
                checks.append(("resnet18", m, STEP_CHECK, f"<= {target:g}", f"not measured: {NO_STEPS}", whole, None))
            else:
                checks.append(("resnet18", m, STEP_CHECK, f"<= {target:g}", f"{ratio:.3f}", whole, ratio <= target))
            if m not in COUNTERS_MODES:
                continue
            target = f">= {BUDGET_FASTER_THAN_NCU:g}"
            if ("resnet18", "ncu") in wall:
                whole = f"{wall[('resnet18', 'ncu')] / wall[('resnet18', m)]:.2f}"
                ncu_ms, mine = step("ncu", "profiled_step_ms"), step(m, "profiled_step_ms")
                if not ok:
                    checks.append(("resnet18", m, NCU_CHECK, target, f"not measured: {note}", whole, None))
                elif ncu_ms is None or not mine:
                    checks.append(("resnet18", m, NCU_CHECK, target, f"not measured: {NO_STEPS}", whole, None))
                else:
                    faster = ncu_ms / mine
                    checks.append(("resnet18", m, NCU_CHECK, target, f"{faster:.2f}", whole,
                                   faster >= BUDGET_FASTER_THAN_NCU))
            elif ("resnet18", "ncu") in unfinished:
                checks.append(("resnet18", m, NCU_CHECK, target,
                               f"not measured: ncu {unfinished[('resnet18', 'ncu')]}", "", None))
    init = wall.get(("cuda_init", "native"))
    if init is not None:
        for m in ("timing", "roofline"):
            if ("cuda_init", m) in wall:
                added = round(wall[("cuda_init", m)] - init, 3)  # wall_s has ms resolution
                checks.append(("cuda_init", m, INIT_CHECK, f"< {BUDGET_INIT_ADDED_S:g}", f"{added:.3f}", "",
                               added < BUDGET_INIT_ADDED_S))
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

    def unfinished(self):
        """(workload, mode) -> why a mode with counted runs has none that exited 0."""
        out = {}
        for w in self.chosen:
            for m in self.modes:
                mine = self.counted(w, m)
                if mine and not self.counted(w, m, True):
                    out[(w, m)] = run_outcome(mine[-1])
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
                    unchecked = (f"its trace could not be analyzed (no trace, or rfanalyze failed: "
                                 f"logs/{w}-{m}-rfanalyze.log)")
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

    def readme(self, rows, steps):
        args, out = self.args, io.StringIO()
        counters, unfinished = self.counters(), self.unfinished()
        repeat_modes = [m for m in self.modes if m in args.repeat_modes]
        once = [m for m in self.modes if m not in args.repeat_modes]
        out.write(f"# rfprof overhead, {datetime.date.today().isoformat()}\n\n")
        for k, val in self.versions.items():
            out.write(f"- {k}: {val}\n")
        cmd = " ".join(shlex.quote(a) for a in (self.argv if self.argv is not None else sys.argv[1:]))
        out.write(f"\nCommand: `bench/overhead.py {cmd}`: per workload {args.warmup_runs} native warm-up run(s), "
                  f"not counted, then {args.repeats} round(s) of {', '.join(repeat_modes) or 'no mode'} (each "
                  "round every one of them once, in this order)"
                  + (f", then {', '.join(once)} once" if once else "") + "; each figure is the median of a "
                  "mode's runs that exited 0.\n")
        if Stop.signum:
            out.write(f"\n**Interrupted by {signal_name(Stop.signum)}** after {len(self.runs)} run(s): the run in "
                      "progress was stopped and nothing more was run; the tables hold the runs that ended before.\n")

        out.write("\n## Whole command (overhead.csv)\n\nWall time from start to exit. For resnet18 that is mostly "
                  "Python's imports, CUDA initialization and the model's set-up (about 13 s on an H100, where a "
                  "step takes about 11 ms): the budget is judged on the steps below. A mode without a run that "
                  "exited 0 is not in overhead.csv; its row here says how its runs ended (a run stopped at its "
                  "time limit ran at least wall_s).\n\n"
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
                    walls = " / ".join(f"{x['wall']:.3f}" for x in ok)
                    if len(ok) > 1:
                        notes.insert(0, f"runs: {walls}")
                    out.write(f"| {w} | {m} | {r['wall_s']} | {r['ratio_to_native']} | {runs} | {'; '.join(notes)} |\n")
                else:
                    longest = max(mine, key=lambda x: x["wall"])
                    lower = longest["exit_status"] in ("timeout", "interrupted")
                    wall = f">= {longest['wall']:.3f}" if lower else ""
                    ratio = f">= {longest['wall'] / natives[w]:.3f}" if lower and natives.get(w) else ""
                    out.write(f"| {w} | {m} | {wall} | {ratio} | {runs} | not in overhead.csv: {'; '.join(notes)} |\n")

        if steps:
            out.write("\n## Steps (steps.csv)\n\nexamples/imagenet/main.py's own step times (\"step I: X ms\"; "
                      "\"(profiled)\": inside the profiling window). Each is timed from a synchronize after the "
                      "window's cudaProfilerStart to a synchronize before its cudaProfilerStop, so what a "
                      "profiler does when a window opens or closes (ending a replay pass, decoding) is in the "
                      "whole command only. profiled_step_ms: median of the profiled steps, all runs pooled; "
                      "native, same steps: native's median over the same step indexes; unprofiled: the other "
                      "steps but each run's first (CUDA and cuDNN set-up). roofline-step-replay profiles its "
                      "pass windows and then the timing window (--step-replay-steps).\n\n"
                      "| workload | mode | runs | profiled steps: median ms each | profiled_step_ms | "
                      "native, same steps (ms) | ratio_to_native | unprofiled_step_ms |\n"
                      "|---|---|---|---|---|---|---|---|\n")
            for r in step_rows(self.chosen, self.modes, steps):
                each = ", ".join(f"{i}: {ms:.2f}" for i, ms in steps[(r["workload"], r["mode"])]["per_step"].items())
                out.write(f"| {r['workload']} | {r['mode']} | {r['runs']} | {each} | {r['profiled_step_ms']} | "
                          f"{r['native_step_ms']} | {r['ratio_to_native']} | {r['unprofiled_step_ms']} |\n")

        checks = budget_checks(rows, steps, counters, unfinished)
        if checks:
            out.write("\n## Against issue 8's budget\n\nJudged on resnet18's step times (Steps above): a mode's "
                      "profiled steps against native's same steps, ncu's profiled step against the mode's. "
                      "\"whole command\" is the same ratio of the commands' wall times (overhead.csv), given "
                      "for comparison and not judged: ResNet-18's start-up is most of it. cuda_init's check is on "
                      "its whole command, which is CUDA initialization. A roofline mode is judged only when its "
                      "trace holds counters. A check whose runs did not all end is absent, or \"not measured\" "
                      "with the reason.\n\n"
                      "| workload | mode | check | target | measured (judged) | whole command (not judged) | met |\n"
                      "|---|---|---|---|---|---|---|\n")
            for w, m, check, target, measured, whole, met in checks:
                verdict = "not measured" if met is None else ("yes" if met else "NO")
                out.write(f"| {w} | {m} | {check} | {target} | {measured} | {whole} | {verdict} |\n")

        if self.costs or self.coverage:
            out.write("\n## Where rfprof's own time went (costs.csv)\n\nFrom each rfprof mode's last trace, its "
                      "ProfilerOverhead records (phases: docs/trace-format.md). With counters: launches of the "
                      "trace that have counters (rfanalyze's join); callbacks: entry + exit per launch, "
                      "2 * total / count of launch.callbacks (timed one in 64 in timing mode, every one in "
                      "counters mode); launch call under counters: launch.counters' total / count, the mean "
                      "launch call while the Range Profiler ran (kernel replay inside it); decode: DecodeData + "
                      "evaluation, and write: writer flushes + activity buffers, over the trace's launches; "
                      "set-up: session start + counters set-up + Range Profiler enable. The per-launch figures "
                      "are costs.csv's ns_per_launch.\n\n"
                      "| workload | mode | launches | with counters | callbacks ns/launch "
                      "| launch call under counters (ms) | decode ns/launch | write ns/launch | set-up ms |\n"
                      "|---|---|---|---|---|---|---|---|---|\n")
            for r in cost_summary(self.costs, self.coverage):
                out.write("| " + " | ".join(str(c) for c in r) + " |\n")
        if self.calls:
            out.write("\nLaunch calls (trace.json's launch API calls, in time order). Under kernel replay a call holds "
                      "its kernel's replay passes and the save and restore of the memory it may write; the first "
                      "call also holds the Range Profiler's set-up.\n\n"
                      "| workload | mode | calls | first call (ms) | median of the others (ms) | longest (ms) |\n"
                      "|---|---|---|---|---|---|\n")
            for (w, m), (n, first, median, longest) in self.calls.items():
                out.write(f"| {w} | {m} | {n} | {first:.3f} | {'' if median is None else f'{median:.3f}'} "
                          f"| {longest:.3f} |\n")

        lines = [f"- {w}, {m}: {why}" for w, m, why in self.skipped]
        for w in self.chosen:
            for m in self.modes:
                mine = self.counted(w, m)
                if mine and not self.counted(w, m, True):
                    said = last_line(mine[-1]["log"])
                    lines.append(f"- {w}, {m}: no run exited 0 (last: {run_outcome(mine[-1], short=True)}"
                                 + (f"; its last line: {said}" if said else "") + ")")
                elif not mine and (w, m) in self.not_run:
                    lines.append(f"- {w}, {m}: not run: {self.not_run[(w, m)][1]}")
        if self.analysis not in ("pending", "done"):
            lines.append(f"- every rfprof run, per-phase costs: {self.analysis}")
        if lines:
            out.write("\n## Not measured\n\n" + "\n".join(lines) + "\n")
        out.write("\nEvery command with its environment, and every run with how it ended: runs.csv.\n")
        return out.getvalue()


def run_outcome(run, short=False):
    """How a run that did not exit 0 ended, e.g. "timeout after >= 200.000 s"."""
    status, wall = run["exit_status"], run["wall"]
    if status in ("timeout", "interrupted"):
        return f"{status} after >= {wall:.3f} s" if short else \
            f"{'stopped at its time limit' if status == 'timeout' else 'interrupted'} after >= {wall:.3f} s"
    if isinstance(status, int):
        return str(status) if short else f"exited {status} after {wall:.3f} s"
    return str(status)


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
    ap.add_argument("--resnet-args", default="--iters 12 --warmup 5 --profile-iters 5")
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
    bench = Bench(out, argv, args, chosen, modes, plan, skipped, versions(args))
    bench.write()
    began = time.monotonic()
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
        if m in RFPROF_MODES:  # a trace left by an earlier run must not be read as this one's
            for stale in (trace_path(out, w, m), trace_path(out, w, m) + ".part"):
                if os.path.exists(stale):
                    os.remove(stale)
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
        for w in chosen:
            for m in modes:
                if m not in RFPROF_MODES or not bench.counted(w, m) or Stop.signum:
                    continue
                left = args.budget - (time.monotonic() - began) if args.budget else 600
                bench.costs += collector_costs(args.rfanalyze, out, w, m, timeout=max(left, 10))
                cov = counter_coverage(out, w, m)
                if cov is not None:
                    bench.coverage[(w, m)] = cov
                lc = launch_calls(out, w, m)
                if lc is not None:
                    bench.calls[(w, m)] = lc
        bench.analysis = "done" if not Stop.signum else \
            f"analysis cut short: interrupted by {signal_name(Stop.signum)}"
    rows = bench.write()
    print(f"overhead: {len(rows)} results in {os.path.join(out, 'overhead.csv')}", file=sys.stderr)
    if Stop.signum:
        print(f"overhead: interrupted by {signal_name(Stop.signum)}: the tables hold the runs that ended before",
              file=sys.stderr)
        return 128 + Stop.signum
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
