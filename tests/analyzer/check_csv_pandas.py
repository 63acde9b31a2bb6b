"""Reads rfanalyze's CSV outputs with pandas (a real RFC 4180 reader) and checks their values.

Usage: check_csv_pandas.py REPORT_DIR   (REPORT_DIR from the training trace of test_end_to_end.cpp)
"""
import sys

import pandas as pd

d = sys.argv[1]
k = pd.read_csv(f"{d}/kernels.csv", keep_default_na=False, dtype=str)
for col in ["id", "pid", "device", "stream", "kernel", "grid", "block", "duration_ns", "fp64_flop",
            "fp32_flop", "fp16_flop", "dram_read_bytes", "dram_write_bytes", "tensor_tf32_flop",
            "tensor_fp16_sparse_flop", "tensor_int8_ops", "l2_bytes", "l1_bytes", "arithmetic_intensity",
            "l2_arithmetic_intensity", "l1_arithmetic_intensity", "flop_per_s", "nvtx", "phase"]:
    assert col in k.columns, (col, list(k.columns))
assert len(set(k.columns)) == len(k.columns), list(k.columns)
row = k[k["id"] == "1101"].iloc[0]
assert row["kernel"] == "ffma_loop(float*, int)", row["kernel"]
assert row["grid"] == "1024,1,1" and row["block"] == "256,1,1"
assert float(row["fp32_flop"]) == 2000 and float(row["arithmetic_intensity"]) == 2
assert row["nvtx"] == "iteration/forward" and row["phase"] == "forward"
assert k[k["id"] == "102"].iloc[0]["kernel"] == "reduce_kernel<float, 2>(float const*, float*)"
assert k[k["id"] == "104"].iloc[0]["fp32_flop"] == ""
c = pd.read_csv(f"{d}/counters.csv", keep_default_na=False, dtype=str)
assert list(c.columns) == ["id", "kernel", "metric", "value", "pid", "window"]
assert set(c["pid"]) == {"4242"}, set(c["pid"])
assert len(c) == 48, len(c)
r = pd.read_csv(f"{d}/ranges.csv", keep_default_na=False, dtype=str)
assert set(r["nvtx"]) == {"", "iteration/forward", "iteration/backward", "iteration/optimizer"}
p = pd.read_csv(f"{d}/phases.csv", keep_default_na=False, dtype=str)
assert set(p["phase"]) == {"forward", "backward", "optimizer", "other"}
print("pandas check ok")
