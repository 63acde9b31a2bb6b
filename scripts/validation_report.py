#!/usr/bin/env python3
"""Writes overhead.csv and the report skeleton report.md of a scripts/gpu-validate folder.
Python 3 standard library only.

Reads (each optional): facts.txt ("key: value" lines), times.csv (workload,mode,wall_s,rc lines
appended by gpu-validate), bench/overhead.csv (bench/overhead.py's table, used when times.csv has
no run: gpu-validate's first15 times nothing itself), steps.log, compare-summary.txt
(scripts/compare.py), sass/check.txt, ctest-gpu.log, resnet/flop_count.json,
analysis*/<run>/profiler_overhead.csv and bench/analysis/<run>/profiler_overhead.csv (rfanalyze).
Writes:
  overhead.csv  workload,mode,wall_s,ratio_to_native: runs that exited 0, wall time of the whole
                command, ratio to the native run of the same workload in the same invocation (or
                bench/overhead.csv's rows as they are)
  report.md     the template of validation/README.md, filled with what was measured; the
                "Findings" section is left for a person to write.
Usage: validation_report.py DIR   (exit 2 when DIR is not a directory)
"""
import csv
import json
import os
import sys


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def facts(root):
    out = {}
    for line in read(os.path.join(root, "facts.txt")).splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def runs(root):
    """times.csv lines as dicts; the last run of each (workload, mode) wins."""
    latest = {}
    for row in csv.reader(read(os.path.join(root, "times.csv")).splitlines()):
        if len(row) == 4:
            latest[(row[0], row[1])] = {"workload": row[0], "mode": row[1], "wall_s": row[2],
                                        "rc": row[3]}
    return list(latest.values())


def overhead_rows(all_runs):
    """[workload, mode, wall_s, ratio_to_native] for the runs that exited 0."""
    ok = [r for r in all_runs if r["rc"] == "0" and r["wall_s"]]
    native = {r["workload"]: float(r["wall_s"]) for r in ok if r["mode"] == "native"}
    rows = []
    for r in ok:
        wall = float(r["wall_s"])
        base = native.get(r["workload"])
        ratio = f"{wall / base:.2f}" if base else ""
        rows.append([r["workload"], r["mode"], f"{wall:.3f}", ratio])
    return rows


def bench_overhead_rows(root):
    """bench/overhead.csv's rows ([workload, mode, wall_s, ratio_to_native]), header dropped; []
    when it is missing or has other columns."""
    rows = list(csv.reader(read(os.path.join(root, "bench", "overhead.csv")).splitlines()))
    if not rows or rows[0] != ["workload", "mode", "wall_s", "ratio_to_native"]:
        return []
    return [r for r in rows[1:] if len(r) == 4]


def analysis_folders(root):
    """The folders rfanalyze wrote runs into: analysis*/ of `root`, then bench/analysis/."""
    out = []
    for folder in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        if folder.startswith("analysis") and os.path.isdir(os.path.join(root, folder)):
            out.append(folder)
    if os.path.isdir(os.path.join(root, "bench", "analysis")):
        out.append(os.path.join("bench", "analysis"))
    return out


def collector_cost_rows(root, top=6):
    """[run, phase, count, total_s, mean_ms, max_ms, share] of the costliest phases of each run,
    from the profiler_overhead.csv files rfanalyze wrote under analysis*/<run>/ and
    bench/analysis/<run>/ (one trace each)."""
    rows = []
    for folder in analysis_folders(root):
        for run in sorted(os.listdir(os.path.join(root, folder))):
            text = read(os.path.join(root, folder, run, "profiler_overhead.csv"))
            phases = [r for r in csv.DictReader(text.splitlines()) if r.get("total_ns")]
            phases.sort(key=lambda r: -int(r["total_ns"]))
            for r in phases[:top]:
                total, count = int(r["total_ns"]), int(r["count"])
                share = r.get("share_of_traced_time") or ""
                rows.append([f"{folder}/{run}", r["phase"], count, f"{total / 1e9:.3f}",
                             f"{total / count / 1e6:.3f}" if count else "",
                             f"{int(r['max_ns']) / 1e6:.3f}",
                             f"{float(share) * 100:.1f}%" if share else ""])
    return rows


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def last_line(text, needle):
    hits = [ln for ln in text.splitlines() if needle in ln]
    return hits[-1].strip() if hits else "not run"


def report(root, f, over, all_runs):
    cost = collector_cost_rows(root)
    steps = read(os.path.join(root, "steps.log"))
    commands = [ln.split("): ", 1)[1] for ln in steps.splitlines() if "(timeout " in ln]
    failed = [r for r in all_runs if r["rc"] != "0"]
    summary = read(os.path.join(root, "compare-summary.txt"), "compare.py was not run\n")
    flops = read(os.path.join(root, "resnet", "flop_count.json")).strip()
    try:
        flop_step = json.loads(flops).get("flop_per_step") if flops else None
    except ValueError:
        flop_step = None
    gpu = f.get("gpu") or "unknown GPU"
    return f"""# rfprof GPU validation: {gpu}, {f.get('date', 'unknown date')}

Written by scripts/validation_report.py from the files of this folder; fill in "Findings".

## Setup

{table(["item", "value"], [["GPU", gpu], ["driver", f.get("driver", "")],
                           ["CUDA", f.get("cuda", "")], ["Nsight Compute", f.get("ncu", "")],
                           ["PyTorch", f.get("torch", "")],
                           ["ncu cache/clock settings", f.get("ncu settings", "")],
                           ["rfprof cache/clock settings", "none: no cache flush, clocks as found"]])}

## Commands

```
{chr(10).join(commands) or "(none recorded)"}
```

## 1. GPU tests

`ctest -L gpu`: {last_line(read(os.path.join(root, "ctest-gpu.log")), "tests passed")}

## 2. Known-count kernels (examples/kernels)

- SASS check (cuobjdump): {last_line(read(os.path.join(root, "sass", "check.txt")), "sass_count:")}
- Expected counts against rfprof and ncu: see expected.csv; rfprof against ncu per launch:
  compare.csv. Summary of scripts/compare.py:

```
{summary.rstrip()}
```

## 3. ResNet-18 training steps (examples/imagenet/main.py)

- FLOPs of one training step by FlopCounterMode: {flop_step if flop_step is not None else "not measured"}
- Per kernel and in total: compare.csv (workload resnet18) and the summary above.

## 4. Overhead (wall time of the whole command, same invocation)

{table(["workload", "mode", "wall_s", "ratio_to_native"], over) if over else "no runs recorded"}

Runs that did not finish: {", ".join(f"{r['workload']} {r['mode']} ({r['rc']})" for r in failed) or "none"}

## 5. Where rfprof's own time went (profiler_overhead.csv of each analyzed trace)

The costliest phases of each run, as the collector measured them (phases: docs/trace-format.md;
`launch.counters` contains kernel replay, `counters.setup` and `launch.callbacks` contain others).

{table(["run", "phase", "count", "total_s", "mean_ms", "max_ms", "share of traced time"], cost) if cost else "no profiler_overhead.csv found (traces older than format 1.2, or no run analyzed)"}

## Findings

- (what agrees exactly, what differs and why, what to fix)
"""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print("usage: validation_report.py DIR (a scripts/gpu-validate output folder)",
              file=sys.stderr)
        return 2
    root = argv[0]
    all_runs = runs(root)
    over = overhead_rows(all_runs) if all_runs else bench_overhead_rows(root)
    with open(os.path.join(root, "overhead.csv"), "w", encoding="utf-8", newline="") as out:
        w = csv.writer(out)
        w.writerow(["workload", "mode", "wall_s", "ratio_to_native"])
        w.writerows(over)
    with open(os.path.join(root, "report.md"), "w", encoding="utf-8") as out:
        out.write(report(root, facts(root), over, all_runs))
    print(f"validation_report: overhead.csv ({len(over)} runs), report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
