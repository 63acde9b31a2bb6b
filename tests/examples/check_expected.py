#!/usr/bin/env python3
"""GPU test: run one known-count example under librfinject, analyze its trace with rfanalyze,
and check rfprof's counters against the example's RFPROF_EXPECTED line: every smsp__sass_* count
and every fp*_flop exactly, DRAM bytes within the example's tolerance (scripts/compare.py).

Usage: check_expected.py --example BIN --inject LIBRFINJECT --rfanalyze RFANALYZE --workdir DIR
       [-- EXAMPLE_ARGS...]
Exit status: 0 all met, 1 a difference (one line each on stderr), 2 the run itself failed.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import compare  # noqa: E402

PREFIX = "RFPROF_EXPECTED "


def expected_from(stdout, what):
    lines = [ln[len(PREFIX):] for ln in stdout.splitlines() if ln.startswith(PREFIX)]
    if len(lines) != 1:
        raise compare.BadInput(f"{what}: expected one '{PREFIX}{{json}}' line on stdout, "
                               f"found {len(lines)}")
    return json.loads(lines[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--example", required=True)
    ap.add_argument("--inject", required=True)
    ap.add_argument("--rfanalyze", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("example_args", nargs="*")
    args = ap.parse_args(argv)
    name = os.path.basename(args.example)
    os.makedirs(args.workdir, exist_ok=True)
    trace = os.path.join(args.workdir, name + ".rftrace")
    analysis = os.path.join(args.workdir, "analysis")
    env = dict(os.environ, CUDA_INJECTION64_PATH=args.inject, NVTX_INJECTION64_PATH=args.inject,
               RFPROF_OUTPUT=trace, RFPROF_FORCE_OVERWRITE="1")
    run = subprocess.run([args.example] + args.example_args, env=env, capture_output=True,
                         text=True, timeout=300)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        print(f"check_expected: {name} exited with {run.returncode} under librfinject",
              file=sys.stderr)
        return 2
    ana = subprocess.run([args.rfanalyze, trace, "-o", analysis], capture_output=True, text=True,
                         timeout=300)
    if ana.returncode != 0:
        print(f"check_expected: rfanalyze {trace} failed ({ana.returncode}): {ana.stderr.strip()}",
              file=sys.stderr)
        return 2
    try:
        expected = expected_from(run.stdout, name)
        rf = compare.read_rfprof_counters(os.path.join(analysis, "counters.csv"))
        flops = compare.read_rfprof_flops(os.path.join(analysis, "kernels.csv"))
    except compare.BadInput as e:
        print(f"check_expected: {e}", file=sys.stderr)
        return 2
    rows, problems = compare.check_expected(name, expected, rf, flops)
    for p in problems:
        print(f"check_expected: {p}", file=sys.stderr)
    print(f"check_expected: {name}: {len(rows)} expected values checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
