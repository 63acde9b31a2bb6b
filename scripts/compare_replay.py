#!/usr/bin/env python3
"""Replay across steps against kernel replay (issue 8): the same training step profiled both
ways must give equal instruction counts, launch by launch.

  compare_replay.py REFERENCE STEP_REPLAY_ANALYSIS

STEP_REPLAY_ANALYSIS is an rfanalyze output folder (counters.csv). REFERENCE is either another
rfanalyze folder (kernel replay of the same step) or a file: ncu's `--csv --page raw` report of
the same step (ncu replays kernels too, and its instruction counts equal rfprof's kernel replay's,
387 of 387 launches on the H100 ResNet-18 step of 2026-11-23), which spares a GPU run of kernel
replay. Launches are aligned by kernel base name as scripts/compare.py aligns rfprof with ncu;
every smsp__sass_* count must be equal.
With RFPROF_REPLAY_GROUPS > 1 the step replay has one timing window per group, each a step of its
own: its launches are grouped by counters.csv's (pid, window) and each timing window is compared
with the whole reference on its own, one line per window. A counters.csv without the pid and
window columns (rfanalyze before 2026-11-29) is one step.
Prints a summary; exit status 1 on any difference, launch on one side only, or timing window
without instruction counts; 2 on bad input.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def read_reference(path):
    """(launches, label) of REFERENCE: an rfanalyze folder (kernel replay) or an ncu raw CSV."""
    if os.path.isdir(path):
        return compare.read_rfprof_counters(os.path.join(path, "counters.csv")), "kernel replay"
    return compare.read_ncu_raw(path), "ncu"


def timing_windows(launches):
    """[((pid, window), launches)] of the step replay, in order of first appearance; one group
    keyed (None, None) for a counters.csv without the pid and window columns."""
    groups = {}
    for x in launches:
        groups.setdefault((x.get("pid"), x.get("window")), []).append(x)
    return list(groups.items())


def window_name(key, pids):
    """"window 2", with "pid 4242" when the step analysis holds several processes; "window -"
    for launches without a window (no launch record in the trace)."""
    pid, window = key
    text = "window " + ("-" if window is None else str(window))
    return text + (f" (pid {pid})" if pids > 1 else "")


def sass_of(rows):
    """The compare.csv rows with a smsp__sass_* count on both sides."""
    return [r for r in rows if r[3].startswith(compare.SASS_PREFIX) and r[4] is not None and r[5] is not None]


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        reference, label = read_reference(argv[0])
        step = compare.read_rfprof_counters(os.path.join(argv[1], "counters.csv"))
    except compare.BadInput as e:
        print(f"compare_replay: {e}", file=sys.stderr)
        return 2
    name = "step-vs-" + label.replace(" ", "-")
    windows = timing_windows(step)
    with_windows = any(key != (None, None) for key, _ in windows)
    pids = len({key[0] for key, _ in windows})
    all_sass, problems, empty, lines = [], [], 0, []
    for key, launches in windows:
        wname = name + (" " + window_name(key, pids) if with_windows else "")
        rows, p = compare.compare_workload(wname, launches, reference, labels=("step replay", label))
        sass = sass_of(rows)
        empty += not sass
        all_sass += sass
        problems += p
        lines.append(f"{window_name(key, pids)}: launches {len(launches)}, smsp__sass_* counts compared: "
                     f"{len(sass)}, equal: {sum(1 for r in sass if r[4] == r[5])}, problems: {len(p)}")
    # The overall summary first (gpu-validate logs the first 300 characters), then each window.
    print(f"launches: {label} {len(reference)}, step replay {len(step)}"
          + (f" in {len(windows)} timing window(s)" if with_windows else ""))
    print(f"smsp__sass_* counts compared: {len(all_sass)}, equal: {sum(1 for r in all_sass if r[4] == r[5])}")
    print(f"problems: {len(problems)}")
    for line in lines if with_windows else []:
        print(line)
    for p in problems[:50]:
        print("  " + p)
    return 1 if problems or empty or not all_sass else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
