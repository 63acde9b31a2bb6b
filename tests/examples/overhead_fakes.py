"""Shared by the tests of bench/overhead.py without a GPU (test_bench_overhead.py,
test_bench_overhead_tables.py): stand-in workloads, main.py, ncu and rfanalyze, and the base test
case that writes them."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OVERHEAD = os.path.join(ROOT, "bench", "overhead.py")


def import_overhead():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import overhead
    finally:
        sys.path.pop(0)
    return overhead


def running(pid):
    """Whether process `pid` runs (a zombie does not: where PID 1 reaps no orphan, one stays)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def kill_if_running(pid):
    if running(pid):
        os.kill(pid, signal.SIGKILL)


def pids_in(path):
    """The process ids a stand-in wrote to `path`, one a line ([] without the file)."""
    try:
        with open(path) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


# A stand-in for examples/imagenet/main.py: it prints main.py's step lines ("step I: X ms, loss L",
# " (profiled)" for the steps of its profiling window, the last --profile-iters after --warmup)
# with the times CONFIG gives the mode it runs in, and, under librfinject, writes a stand-in trace
# (JSON, read by FAKE_RFANALYZE) to RFPROF_OUTPUT. CONFIG: {"profiled": {mode: [ms of each
# profiled step]}, "trace": {mode: {"launches", "with_counters", "phases": [[phase, count,
# total_ns, max_ns]]}}, "rfprof": {mode: a line printed to stderr}, "sleep": {mode: s},
# "exit": {mode: exit status, before any step}, "no_steps": [modes printing no step line]}.
FAKE_MAIN = """
import json, os, sys, time
config = json.load(open(CONFIG))
mode = ("ncu" if os.environ.get("UNDER_NCU") else "roofline-step-replay" if os.environ.get("RFPROF_REPLAY")
        else {"timing": "timing", "counters": "roofline"}.get(os.environ.get("RFPROF_MODE"), "native"))
def last(flag, default):
    args = sys.argv[1:]
    return int(args[len(args) - 1 - args[::-1].index(flag) + 1]) if flag in args else default
iters, warmup, prof = last("--iters", 8), last("--warmup", 3), last("--profile-iters", 1)
if mode in config.get("rfprof", {}):
    print(config["rfprof"][mode], file=sys.stderr, flush=True)
time.sleep(config.get("sleep", {}).get(mode, 0))
if mode in config.get("exit", {}):
    print(f"fake main.py: exit {config['exit'][mode]} in {mode}", flush=True)
    sys.exit(config["exit"][mode])
times = config.get("profiled", {}).get(mode, [])
print(f"main.py: resnet18, batch 64, {iters} steps, profiled steps {warmup}..{warmup + prof - 1}, amp False")
for i in range(iters if mode not in config.get("no_steps", []) else 0):
    window = warmup <= i < warmup + prof
    ms = 1000.0 if i == 0 else (times[i - warmup] if window and i - warmup < len(times) else 10.0)
    print(f"step {i}: {ms:.2f} ms, loss 6.9{i}{' (profiled)' if window else ''}", flush=True)
trace = config.get("trace", {}).get(mode)
if trace and os.environ.get("RFPROF_OUTPUT"):
    with open(os.environ["RFPROF_OUTPUT"], "w") as f:
        json.dump(dict(trace, mode="timing" if mode == "timing" else "counters"), f)
"""

# A stand-in for rfanalyze on FAKE_MAIN's traces: kernels.csv (a row per launch),
# profiler_overhead.csv (the trace's phases) and summary.json (launches, those without counters).
FAKE_RFANALYZE = r"""
import json, os, sys
trace, dest = sys.argv[1], sys.argv[sys.argv.index("-o") + 1]
t = json.load(open(trace))
os.makedirs(dest, exist_ok=True)
with open(os.path.join(dest, "kernels.csv"), "w") as f:
    f.write("kernel,launch\n" + "".join(f"k{i},{i}\n" for i in range(t["launches"])))
with open(os.path.join(dest, "profiler_overhead.csv"), "w") as f:
    f.write("trace,pid,phase,count,total_ns,mean_ns,max_ns,share_of_traced_time\n")
    for phase, count, total, longest in t.get("phases", []):
        f.write(f"{trace},1,{phase},{count},{total},{total / count if count else 0},{longest},0\n")
with open(os.path.join(dest, "summary.json"), "w") as f:
    json.dump({"traces": [{"launches": t["launches"], "mode": t["mode"],
                           "join": {"rows_without_counters": t["launches"] - t.get("with_counters", 0)}}],
               "collector_errors": []}, f)
"""


class OverheadTestBase(unittest.TestCase):
    """Writes the stand-ins of a test into its own temporary folder; runs bench/overhead.py."""

    # ResNet-18's step times per mode for FAKE_MAIN (fake_resnet), and its traces' launches.
    RESNET_STEPS = {"profiled": {"native": [10.0], "timing": [10.3], "roofline": [400.0],
                                 "roofline-step-replay": [250.0, 21.0, 10.5], "ncu": [50000.0]},
                    "trace": {m: {"launches": 387, "with_counters": 387} for m in
                              ("timing", "roofline", "roofline-step-replay")}}
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.log = os.path.join(self.tmp, "log.jsonl")
        # The workload records its environment (wall times are not asserted: no timed tests).
        self.workload = self.script("work.py", f"""
            import json, os, sys, time
            keys = ["CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "RFPROF_MODE", "RFPROF_OUTPUT",
                    "RFPROF_PROFILE_FROM_START", "UNDER_NCU", "RFPROF_STEP_PASS_START"]
            with open({self.log!r}, "a") as f:
                f.write(json.dumps({{k: os.environ.get(k) for k in keys}}) + "\\n")
            time.sleep(0.01)
            """)
        self.ncu = self.script("ncu", """
            import os, sys
            args = sys.argv[1:]
            assert args[args.index("--cache-control") + 1] == "all"
            assert args[args.index("--clock-control") + 1] == "base"
            assert "--metrics" in args and "dram__bytes_read.sum" in args[args.index("--metrics") + 1]
            cmd = args[args.index("-o") + 2:]
            os.environ["UNDER_NCU"] = "1"
            os.execvp(cmd[0], cmd)
            """)
        self.inject = os.path.join(self.tmp, "librfinject.so")
        open(self.inject, "w").close()

    def script(self, name, body):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write("#!" + sys.executable + "\n" + textwrap.dedent(body))
        os.chmod(path, 0o755)
        return path

    def run_overhead(self, *extra, env=None):
        out = os.path.join(self.tmp, "results")
        p = subprocess.run([sys.executable, OVERHEAD, "--out", out, "--inject", self.inject, "--ncu", self.ncu,
                            "--workload", f"fake={self.workload}", "--workloads", "fake", *extra],
                           capture_output=True, text=True, env=env, timeout=300)
        return p, out

    def fake_resnet(self, config):
        """(--windowed-workload argument naming FAKE_MAIN resnet18 with `config`, fake rfanalyze)."""
        path = os.path.join(self.tmp, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        main = self.script("main.py", f"CONFIG = {path!r}\n" + FAKE_MAIN)
        rfanalyze = self.script("rfanalyze", FAKE_RFANALYZE)
        return f"resnet18={main} -a resnet18 --dummy --iters 8 --warmup 3 --profile-iters 1", rfanalyze

    def read_csv(self, out, name):
        with open(os.path.join(out, name)) as f:
            return list(csv.DictReader(f))

    def readme(self, out):
        with open(os.path.join(out, "README.md")) as f:
            return f.read()
