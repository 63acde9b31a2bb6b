#!/usr/bin/env python3
"""Checks rfanalyze's FLOP counts against analytic ones (validation/README.md, issue 7).

  check_flops.py gemm KERNELS_CSV [--n-fp64 1024 --n 2048]
      every kernel of `rfbench --quick --only tensor-...` that did tensor-core math: its FLOP in
      its precision's column must equal 2*n^3 (cublasGemmEx n x n x n; rfbench/src/gemm.cpp)
  check_flops.py resnet KERNELS_CSV FLOP_COUNT_JSON
      the profiled training step: tensor-core FLOP (+ FP32/FP16/FP64 FLOP) per phase against
      torch.utils.flop_counter.FlopCounterMode's count of the same step (examples/imagenet/main.py)
Prints one line per check and a table; exits 1 when a gemm check fails.
"""
import csv
import json
import sys

TENSOR = ["tensor_fp64_flop", "tensor_tf32_flop", "tensor_fp16_flop", "tensor_bf16_flop",
          "tensor_fp8_flop", "tensor_int8_ops"]
SIMT = ["fp64_flop", "fp32_flop", "fp16_flop"]


def num(v):
    return float(v) if v not in ("", None) else 0.0


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def gemm(path, n, n_fp64):
    failures = checked = 0
    for r in rows(path):
        cols = [c for c in TENSOR if num(r.get(c)) > 0]
        if not cols:
            continue
        checked += 1
        col = cols[0]
        size = n_fp64 if col == "tensor_fp64_flop" else n
        expected = 2.0 * size ** 3
        got = num(r[col])
        ok = len(cols) == 1 and got == expected
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {col:18} {got:>16,.0f} expected 2*{size}^3 = {expected:>16,.0f}"
              f"  {r['kernel'][:70]}")
    print(f"gemm: {checked} tensor-core kernel(s) checked, {failures} failure(s)")
    return 1 if failures or not checked else 0


def resnet(path, flop_json):
    expected = json.load(open(flop_json))
    phases = {}
    for r in rows(path):
        p = phases.setdefault(r.get("phase") or "(none)", {c: 0.0 for c in TENSOR + SIMT})
        for c in TENSOR + SIMT:
            p[c] += num(r.get(c))
    want = {"forward": expected["flop_forward"], "backward": expected["flop_backward"]}
    print(f"{'phase':10} {'tensor FLOP':>18} {'FP32+16+64 FLOP':>18} {'FlopCounterMode':>18} {'tensor/FCM':>10}")
    tot_t = tot_s = 0.0
    for name, p in sorted(phases.items()):
        t = sum(p[c] for c in TENSOR)
        s = sum(p[c] for c in SIMT)
        tot_t += t
        tot_s += s
        w = want.get(name)
        ratio = f"{t / w:.4f}" if w else ""
        print(f"{name:10} {t:>18,.0f} {s:>18,.0f} {w if w else 0:>18,.0f} {ratio:>10}")
    fcm = expected["flop_per_step"]
    print(f"{'step':10} {tot_t:>18,.0f} {tot_s:>18,.0f} {fcm:>18,.0f} {tot_t / fcm:>10.4f}")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "gemm":
        n, n64 = 2048, 1024
        if "--n" in argv:
            n = int(argv[argv.index("--n") + 1])
        if "--n-fp64" in argv:
            n64 = int(argv[argv.index("--n-fp64") + 1])
        return gemm(argv[1], n, n64)
    if len(argv) == 3 and argv[0] == "resnet":
        return resnet(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
