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
Prints a summary; exit status 1 on any difference or launch on one side only, 2 on bad input.
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
    rows, problems = compare.compare_workload("step-vs-" + label.replace(" ", "-"), step, reference,
                                              labels=("step replay", label))
    sass = [r for r in rows if r[3].startswith(compare.SASS_PREFIX) and r[4] is not None and r[5] is not None]
    equal = sum(1 for r in sass if r[4] == r[5])
    print(f"launches: {label} {len(reference)}, step replay {len(step)}")
    print(f"smsp__sass_* counts compared: {len(sass)}, equal: {equal}")
    print(f"problems: {len(problems)}")
    for p in problems[:50]:
        print("  " + p)
    return 1 if problems or not sass else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
