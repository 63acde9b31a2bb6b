#!/usr/bin/env python3
"""Compare rfprof with Nsight Compute (ncu), launch by launch, and both with the examples'
analytic counts. Python 3 standard library only (the GPU machine may lack pandas).

Reads, for each workload W, under the validation folder DIR (the layout scripts/gpu-validate
writes):
  DIR/analysis/W/counters.csv  rfanalyze output: id,kernel,metric,value,pid,window (one row per
                               launch per metric; pid and window absent in files written before
                               2026-11-29: launches are then known by id alone)
  DIR/analysis/W/kernels.csv   rfanalyze output (optional): fp64/fp32/fp16_flop per launch
  DIR/ncu/W.csv                ncu --csv --page raw --log-file output
  DIR/expected/W.json          the JSON of an example's "RFPROF_EXPECTED {...}" line (optional)
Writes:
  DIR/compare.csv   workload,launch,kernel,metric,rfprof,ncu (one row per launch per metric)
  DIR/expected.csv  workload,kernel,metric,expected,rfprof,ncu,ok
and a summary on stdout: per metric the launches compared, how many are equal and the largest
relative difference; per workload the distribution of DRAM byte differences; every problem.

An rfprof launch is known by (pid, id): CUPTI's correlation ids restart in each process, so the
traces of two processes analyzed together share ids; a (pid, id) twice in counters.csv (two traces
of one process, or of two processes in a file without the pid column) is bad input, never merged.
rfprof's launches are in trace order (as rfanalyze wrote them), by id within each process.
Launch i of rfprof is matched with launch i of ncu after aligning the two sequences of kernel
base names (ncu shows demangled names, possibly shortened; both are reduced to the function's
base name), so one launch missing on either side is reported, not silently shifted.
Problems (exit status 1): a launch on one side only, a kernel name disagreement, a smsp__sass_*
instruction count that differs between rfprof and ncu, an expected count not met (instruction
counts and FLOPs exactly, DRAM bytes within the example's tolerance). Timing, cache and DRAM
metrics are reported, not judged: ncu flushes caches and locks clocks. Exit 2: bad input.
"""
import argparse
import csv
import difflib
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_count import base_name as mangled_base_name  # noqa: E402

SASS_PREFIX = "smsp__sass_thread_inst_executed_op_"
DRAM = ("dram__bytes_read.sum", "dram__bytes_write.sum")
FLOP_COLUMNS = ("fp32_flop", "fp64_flop", "fp16_flop")
# ncu unit -> factor to rfprof's base unit (bytes, nanoseconds, counts)
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024.0,
           "Mi": 1024.0 ** 2, "Gi": 1024.0 ** 3, "Ti": 1024.0 ** 4}
_TIME = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}


class BadInput(Exception):
    """An input that is not what this script reads; the message names it and what was expected."""


def unit_factor(unit):
    """Multiplier from an ncu unit (e.g. "Mbyte", "usecond", "inst", "") to base units."""
    unit = unit.strip()
    if unit in _TIME:
        return _TIME[unit]
    for base in ("byte", "inst", "cycle", "warp", "thread", "request", "sector"):
        if unit.endswith(base) and unit[:-len(base)] in _PREFIX:
            return _PREFIX[unit[:-len(base)]]
    return 1.0


def parse_number(text):
    """ncu/rfprof number text -> float; thousands separators stripped; None when empty or n/a."""
    t = text.strip().replace(",", "")
    if t == "" or t.lower() in ("n/a", "nan", "-"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def function_base_name(name):
    """Function base name of a kernel name, demangled or mangled:
    'void at::native::foo<float, 4>(int, T2)' -> 'foo', '(anonymous namespace)::ffma_loop(float*)'
    -> 'ffma_loop', '_Z9ffma_loopPKf' -> 'ffma_loop'."""
    s = name.strip()
    if s.startswith("_Z"):
        return mangled_base_name(s)
    for close, open_ in ((")", "("), (">", "<")):
        s = s.rstrip()
        if s.endswith(close):
            depth = 0
            for i in range(len(s) - 1, -1, -1):
                if s[i] == close:
                    depth += 1
                elif s[i] == open_:
                    depth -= 1
                    if depth == 0:
                        s = s[:i]
                        break
    s = s.rsplit("::", 1)[-1]
    return s.split()[-1] if s.split() else s


def _launch(lid, kernel, pid=None, window=None):
    """A launch: its id, pid and window (None when the file has no such column, or the window
    when rfanalyze had no launch record), kernel name, base name and metrics."""
    return {"id": lid, "pid": pid, "window": window, "kernel": kernel, "base": function_base_name(kernel),
            "metrics": {}}


def launch_label(x):
    """A launch as problems name it: "id 12", or "pid 4242 id 12" when its file has pids."""
    return f"id {x['id']}" if x.get("pid") is None else f"pid {x['pid']} id {x['id']}"


def _optional_int(path, row, column):
    """The integer in `column` of a DictReader row; None when the column is absent or empty."""
    text = row.get(column)
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise BadInput(f"{path}: {column} {text!r} is not an integer")


def read_ncu_raw(path):
    """Launches of an ncu `--csv --page raw` file, in ID order, values scaled to base units."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            lines = [ln for ln in f if not ln.startswith("==") and ln.strip()]
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    rows = list(csv.reader(lines))
    start = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if start is None:
        raise BadInput(f'{path}: no header row starting with "ID"; expected ncu --csv --page raw')
    header = rows[start]
    try:
        name_col = header.index("Kernel Name")
    except ValueError:
        raise BadInput(f'{path}: header has no "Kernel Name" column')
    first_metric = header.index("CC") + 1 if "CC" in header else name_col + 1
    factors = [1.0] * len(header)
    launches = []
    for r in rows[start + 1:]:
        if len(r) != len(header):
            continue  # application output or a message that slipped into the log
        if r[0] == "":  # the units row
            factors = [unit_factor(u) for u in r]
            continue
        lid = parse_number(r[0])
        if lid is None:
            continue
        launch = _launch(int(lid), r[name_col])
        for col in range(first_metric, len(header)):
            v = parse_number(r[col])
            launch["metrics"][header[col]] = None if v is None else v * factors[col]
        launches.append(launch)
    launches.sort(key=lambda x: x["id"])
    return launches


def _read_csv_dicts(path, required):
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None or not set(required) <= set(reader.fieldnames):
                raise BadInput(f"{path}: expected columns {','.join(required)}")
            return list(reader)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")


def read_rfprof_counters(path):
    """Launches of rfanalyze's counters.csv (id,kernel,metric,value[,pid,window]), keyed by
    (pid, id) (pid None without the column), in order of each pid's first row, by id within a pid.
    rfanalyze writes a launch's rows together: a key met again after another launch's rows, or a
    metric twice in one launch, is two launches under one key (BadInput, the key named)."""
    by_key, first_seen, current = {}, {}, None
    for row in _read_csv_dicts(path, ("id", "kernel", "metric", "value")):
        lid = _optional_int(path, row, "id")
        if lid is None:
            raise BadInput(f"{path}: a row has no id")
        pid = _optional_int(path, row, "pid")
        key = (pid, lid)
        launch = by_key.get(key)
        if launch is None:
            launch = by_key[key] = _launch(lid, row["kernel"], pid, _optional_int(path, row, "window"))
            first_seen.setdefault(pid, len(first_seen))
        elif key != current or row["metric"] in launch["metrics"]:
            why = ("two traces of one process" if pid is not None else
                   "launches of two traces (correlation ids restart in each process) in a file "
                   "without the pid column: analyze each trace apart, or again with this rfanalyze")
            raise BadInput(f"{path}: launch {launch_label(launch)} appears twice ({why}); "
                           "its launches would be merged")
        current = key
        launch["metrics"][row["metric"]] = parse_number(row["value"])
    return [by_key[k] for k in sorted(by_key, key=lambda k: (first_seen[k[0]], k[1]))]


def read_rfprof_flops(path):
    """{(pid, launch id): {fp32_flop, fp64_flop, fp16_flop}} from rfanalyze's kernels.csv (pid
    None without the column). A key twice is bad input, unless a row has no FLOP at all: a graph
    launch's kernels share its id and have no counters."""
    out = {}
    for row in _read_csv_dicts(path, ("id",) + FLOP_COLUMNS):
        lid, pid = _optional_int(path, row, "id"), _optional_int(path, row, "pid")
        key = (pid, lid)
        values = {c: parse_number(row[c]) for c in FLOP_COLUMNS}
        counted = any(v is not None for v in values.values())
        if key in out and any(v is not None for v in out[key].values()):
            if counted:
                raise BadInput(f"{path}: launch {launch_label({'pid': pid, 'id': lid})} appears twice "
                               "with FLOP (two traces of one process?); its launches would be merged")
            continue
        out[key] = values
    return out


def flops_of(flops, launch):
    """kernels.csv's FLOP of a counters.csv launch: by (pid, id); a launch of a counters.csv without
    pids by its id alone when one process of kernels.csv has it ({} when none does; BadInput when
    several do)."""
    if not flops:
        return {}
    for key in ((launch.get("pid"), launch["id"]), (None, launch["id"])):
        if key in flops:
            return flops[key]
    if launch.get("pid") is None:
        found = [v for (_pid, lid), v in flops.items() if lid == launch["id"]]
        if len(found) > 1:
            raise BadInput(f"launch id {launch['id']} is in kernels.csv for {len(found)} processes and "
                           "counters.csv has no pid column to tell which")
        if found:
            return found[0]
    return {}


def rel_diff(a, b):
    """|a - b| / |b| (b: the reference, ncu or expected); 0 when equal; inf when b == 0 != a."""
    if a is None or b is None:
        return None
    if a == b:
        return 0.0
    return math.inf if b == 0 else abs(a - b) / abs(b)


def fmt(v):
    if v is None:
        return ""
    if v == int(v) and abs(v) < 2.0 ** 63:
        return str(int(v))
    return repr(v)


def align(rf, nc):
    """Pairs (rfprof launch or None, ncu launch or None) in launch order, matched by base name."""
    sm = difflib.SequenceMatcher(None, [x["base"] for x in rf], [x["base"] for x in nc],
                                 autojunk=False)
    pairs = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            pairs += list(zip(rf[i1:i2], nc[j1:j2]))
        else:
            pairs += [(x, None) for x in rf[i1:i2]] + [(None, y) for y in nc[j1:j2]]
    return pairs


def compare_workload(name, rf, nc, labels=("rfprof", "ncu")):
    """compare.csv rows and problems of one workload; `labels` name the two sides in problems."""
    rows, problems = [], []
    # The metrics rfprof collected: ncu's raw page adds device attributes and sub-metrics
    # (.avg/.min/.max of each .sum requested) that rfprof was not asked for.
    metrics = sorted({m for x in rf for m in x["metrics"]})
    for index, (a, b) in enumerate(align(rf, nc)):
        if a is None or b is None:
            only = labels[1] if a is None else labels[0]
            x = b if a is None else a
            problems.append(f"{name}: launch {index} ({x['base']}, {only} {launch_label(x)}) is in "
                            f"{only} only")
        kernel = (a or b)["kernel"]
        for m in metrics:
            rv = a["metrics"].get(m) if a else None
            nv = b["metrics"].get(m) if b else None
            rows.append([name, index, kernel, m, rv, nv])
            if a and b and m.startswith(SASS_PREFIX) and rv != nv:
                problems.append(f"{name}: launch {index} {a['base']}: {m}: {labels[0]} {fmt(rv)} != "
                                f"{labels[1]} {fmt(nv)}")
    return rows, problems


def check_expected(name, expected, rf, flops=None, nc=None):
    """expected.csv rows and problems: the example's analytic counts against rfprof (and ncu)."""
    rows, problems = [], []
    names = {k["kernel"] for k in expected["kernels"]}
    for x in rf:
        if x["base"] not in names:
            problems.append(f"{name}: rfprof launch {launch_label(x)} of {x['base']} is not an expected "
                            "kernel")
    for k in expected["kernels"]:
        mine = {"rfprof": [x for x in rf if x["base"] == k["kernel"]],
                "ncu": [x for x in nc if x["base"] == k["kernel"]] if nc is not None else None}
        for tool, launches in mine.items():
            if launches is not None and len(launches) != k["launches"]:
                problems.append(f"{name}: {k['kernel']}: {tool} saw {len(launches)} launch(es), "
                                f"expected {k['launches']}")

        def total(tool, metric, source="metrics"):
            launches = mine[tool]
            if not launches:
                return None
            if source == "flops":
                vals = [flops_of(flops, x).get(metric) for x in launches]
            else:
                vals = [x["metrics"].get(metric) for x in launches]
            return None if any(v is None for v in vals) else sum(vals)

        checks = [(m, v, "metrics", 0.0) for m, v in sorted(k["metrics"].items())]
        if flops is not None:
            checks += [(c, k[c], "flops", 0.0) for c in FLOP_COLUMNS]
        for metric, key in zip(DRAM, ("dram_read_bytes", "dram_write_bytes")):
            if k.get(key) is not None:
                checks.append((metric, k[key], "metrics", float(k.get("dram_rel_tolerance", 0))))
        for metric, want, source, tol in checks:
            got_rf = total("rfprof", metric, source)
            got_nc = total("ncu", metric, source) if nc is not None and source == "metrics" else None
            ok = True
            for tool, got in (("rfprof", got_rf), ("ncu", got_nc)):
                if tool == "ncu" and (nc is None or source != "metrics"):
                    continue
                d = rel_diff(got, float(want))
                if d is None or d > tol:
                    ok = False
                    problems.append(f"{name}: {k['kernel']}: {metric}: {tool} {fmt(got) or 'missing'}"
                                    f", expected {fmt(float(want))}"
                                    + (f" (tolerance {tol:.0%})" if tol else ""))
            rows.append([name, k["kernel"], metric, want, got_rf, got_nc, "yes" if ok else "no"])
    return rows, problems


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(values)
    return s[max(0, math.ceil(q / 100.0 * len(s)) - 1)]


def summarize(rows, out):
    """Per-metric equality and per-workload DRAM distribution, from compare.csv rows."""
    per_metric = {}
    dram = {}
    by_launch = {}
    for w, launch, _k, m, rv, nv in rows:
        if rv is None or nv is None:
            continue
        s = per_metric.setdefault(m, [0, 0, 0.0])
        s[0] += 1
        s[1] += rv == nv
        s[2] = max(s[2], rel_diff(rv, nv))
        if m in DRAM:
            by_launch.setdefault((w, launch), {})[m] = (rv, nv)
    for (w, _launch_index), d in by_launch.items():
        if len(d) == 2:
            rsum = sum(v[0] for v in d.values())
            nsum = sum(v[1] for v in d.values())
            dram.setdefault(w, []).append(rel_diff(rsum, nsum))
    print(f"{'metric':58s} {'compared':>8s} {'equal':>6s} {'max_rel_diff':>12s}", file=out)
    for m in sorted(per_metric):
        n, eq, mx = per_metric[m]
        print(f"{m:58s} {n:8d} {eq:6d} {mx:12.4g}", file=out)
    if dram:
        print("DRAM bytes (read + write) relative difference rfprof vs ncu, per launch:", file=out)
        print(f"{'workload':24s} {'launches':>8s} {'min':>9s} {'median':>9s} {'p90':>9s} "
              f"{'max':>9s}", file=out)
        for w in sorted(dram):
            v = dram[w]
            print(f"{w:24s} {len(v):8d} {min(v):9.4g} {statistics.median(v):9.4g} "
                  f"{percentile(v, 90):9.4g} {max(v):9.4g}", file=out)


def write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([fmt(v) if isinstance(v, float) else ("" if v is None else v) for v in r])


def discover(root):
    names = set()
    for sub, suffix in (("ncu", ".csv"), ("expected", ".json")):
        d = os.path.join(root, sub)
        if os.path.isdir(d):
            names |= {f[:-len(suffix)] for f in os.listdir(d) if f.endswith(suffix)}
    d = os.path.join(root, "analysis")
    if os.path.isdir(d):
        names |= {f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f, "counters.csv"))}
    return sorted(names)


def run(root, workloads=None, out=None):
    """Compares every workload under `root` (all found when `workloads` is None); writes
    compare.csv and expected.csv there and the summary to `out` (default stdout).
    Returns the list of problems; raises BadInput for unreadable or malformed inputs."""
    out = out or sys.stdout
    if not os.path.isdir(root):
        raise BadInput(f"{root}: not a directory; expected a scripts/gpu-validate output folder")
    names = workloads or discover(root)
    all_rows, exp_rows, problems = [], [], []
    if not names:
        problems.append(f"{root}: no workload found (expected analysis/W/counters.csv, ncu/W.csv "
                        "or expected/W.json)")
    for w in names:
        counters = os.path.join(root, "analysis", w, "counters.csv")
        kernels = os.path.join(root, "analysis", w, "kernels.csv")
        ncu_path = os.path.join(root, "ncu", w + ".csv")
        exp_path = os.path.join(root, "expected", w + ".json")
        rf = read_rfprof_counters(counters) if os.path.isfile(counters) else None
        nc = read_ncu_raw(ncu_path) if os.path.isfile(ncu_path) else None
        print(f"{w}: rfprof {'-' if rf is None else len(rf)} launch(es), "
              f"ncu {'-' if nc is None else len(nc)} launch(es)", file=out)
        if rf is None:
            problems.append(f"{w}: no rfprof counters ({counters})")
            continue
        if nc is not None:
            rows, p = compare_workload(w, rf, nc)
            all_rows += rows
            problems += p
        if os.path.isfile(exp_path):
            try:
                with open(exp_path, encoding="utf-8") as f:
                    expected = json.load(f)
            except (OSError, ValueError) as e:
                raise BadInput(f"{exp_path}: expected the JSON of an RFPROF_EXPECTED line: {e}")
            if not isinstance(expected, dict) or not isinstance(expected.get("kernels"), list):
                raise BadInput(f'{exp_path}: expected {{"example": ..., "kernels": [...]}}')
            flops = read_rfprof_flops(kernels) if os.path.isfile(kernels) else None
            rows, p = check_expected(w, expected, rf, flops, nc)
            exp_rows += rows
            problems += p
    write_csv(os.path.join(root, "compare.csv"),
              ["workload", "launch", "kernel", "metric", "rfprof", "ncu"], all_rows)
    write_csv(os.path.join(root, "expected.csv"),
              ["workload", "kernel", "metric", "expected", "rfprof", "ncu", "ok"], exp_rows)
    summarize(all_rows, out)
    checked = len(exp_rows)
    print(f"expected counts: {checked} checked, {sum(r[-1] == 'no' for r in exp_rows)} not met",
          file=out)
    print(f"problems: {len(problems)}", file=out)
    for p in problems:
        print(f"  {p}", file=out)
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="validation folder written by scripts/gpu-validate")
    ap.add_argument("--workloads", help="comma-separated workloads (default: all found)")
    args = ap.parse_args(argv)
    try:
        problems = run(args.dir, args.workloads.split(",") if args.workloads else None)
    except BadInput as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
