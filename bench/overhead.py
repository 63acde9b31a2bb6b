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
measured). What each file, column and check means: bench/overhead.md.

Exit status: 0; 1 when a workload's native runs have no run that exited 0 (no ratio and no budget
check can be judged against it), which includes "no result at all"; 2 on bad arguments;
128 + N after signal N (SIGINT or SIGTERM: the run in progress is stopped, nothing more runs, the
tables of what finished are written). Never changes clocks or any GPU setting; ncu runs with its
defaults --cache-control all --clock-control base spelled out. Standard library only; tested
without a GPU by tests/examples/test_bench_overhead.py.

This file plans and runs an invocation; beside it: overhead_run.py (running a command in its own
process group, every wait bounded), overhead_steps.py (main.py's step times), overhead_costs.py
(counters and rfprof's own costs, from rfanalyze), overhead_budget.py (issue 8's checks),
overhead_bench.py (the tables and README.md), overhead_common.py (constants and paths).
"""
import argparse
import os
import shlex
import shutil
import signal
import sys
import threading
import time

from overhead_common import MODES, RFPROF_MODES, ROOT, STEP_REPLAY_NEEDS_WINDOWS, WARMUP, analysis_path, trace_path
from overhead_run import Stop, command_output, log_path, on_signal, run_one, signal_name
from overhead_costs import collector_costs, counter_coverage, launch_calls
from overhead_bench import Bench
# Also reached as overhead.NAME (tests/examples/test_bench_overhead.py, and readers of the harness).
from overhead_bench import run_outcome, table_row  # noqa: F401
from overhead_budget import (INIT_CHECK, KERNEL_REPLAY_CHECK, NCU_CHECK, STEP_REPLAY_CHECK,  # noqa: F401
                             TIMING_CHECK, budget_checks)
from overhead_steps import step_summary  # noqa: F401


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
