"""A pandas reader written for ncu's `--csv --page raw` output, used unchanged on rfprof's:
find the "ID" header line, skip the units row, read numbers with thousands=','."""
import sys

import pandas as pd

path = sys.argv[1]
with open(path) as f:
    lines = f.readlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
df = pd.read_csv(path, skiprows=list(range(start)) + [start + 1], thousands=",")
ffma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
print("kernels", len(df))
print("ffma flop", int(2 * df[df["Kernel Name"].str.startswith("ffma_loop")][ffma].sum()))
print("dram read", int(df["dram__bytes_read.sum"].sum()))
