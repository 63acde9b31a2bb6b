"""Constants and paths shared by bench/overhead.py's modules."""
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MODES = ["native", "timing", "roofline", "roofline-step-replay", "ncu"]
# Replay across steps needs one cudaProfilerStart/Stop window per step: only workloads started with
# profile-from-start off have them (main.py --window-per-step).
STEP_REPLAY_NEEDS_WINDOWS = ("replay across steps needs a workload with one cudaProfilerStart/Stop "
                             "window per step (profile-from-start off)")
RFPROF_MODES = ("timing", "roofline", "roofline-step-replay")
COUNTERS_MODES = ("roofline", "roofline-step-replay")
OVERHEAD_COLUMNS = ["workload", "mode", "wall_s", "ratio_to_native"]
RUN_COLUMNS = ["workload", "mode", "repeat", "wall_s", "exit_status", "command"]
STEP_COLUMNS = ["workload", "mode", "runs", "profiled_steps", "profiled_step_ms", "p10_ms", "p90_ms",
                "native_step_ms", "native_p10_ms", "native_p90_ms", "ratio_to_native", "profiled_sum_ms",
                "native_sum_ms", "sum_ratio_to_native", "unprofiled_step_ms"]
COST_COLUMNS = ["workload", "mode", "launches", "phase", "count", "total_ns", "mean_ns", "max_ns",
                "ns_per_launch"]
WARMUP = "warmup"          # runs.csv's repeat of a run that is not counted
INTERRUPT_GRACE_S = 3.0    # SIGTERM to SIGKILL for the run in progress when we are interrupted
LEFTOVER_GRACE_S = 2.0     # the same for what a run that exited left running in its group


def trace_path(out, workload, mode):
    return os.path.join(out, "traces", f"{workload}-{mode}.rftrace")


def analysis_path(out, workload, mode):
    """rfanalyze's output folder for the trace of `mode`'s last run."""
    return os.path.join(out, "analysis", f"{workload}-{mode}")
