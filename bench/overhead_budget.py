"""Issue 8's budget for bench/overhead.py: each check, its target, and what it was judged on."""

from overhead_common import COUNTERS_MODES
from overhead_steps import index_ranges

# --- Issue 8's budget ---------------------------------------------------------------------------

BUDGET_TIMING_RATIO = 1.05     # timing-only mode within 5% of native on ResNet-18
BUDGET_ROOFLINE_RATIO = 2.5    # the roofline set within 2.5x of native on ResNet-18 steps
BUDGET_FASTER_THAN_NCU = 20.0  # at least 20x faster than ncu with the same metrics, same command
BUDGET_INIT_ADDED_S = 0.3      # less than 0.3 s added at CUDA initialization (cuda_init)
# What each ratio is (README's "check" column). Timing costs per step: the median of many steps.
# A roofline mode is judged on everything one step's counters cost it: kernel replay and ncu get
# every counter in each profiled step; replay across steps in one group of steps (a window per
# pass, then the timing window), all of which --step-replay-steps profiles.
TIMING_CHECK = "median profiled step / native's median over the same steps"
KERNEL_REPLAY_CHECK = "profiled steps summed / native's same steps summed"
STEP_REPLAY_CHECK = "profiled steps of one group (passes + timing window) summed / native's same steps summed"
NCU_CHECK = "ncu's ms per profiled step / this mode's ms per step of counters"
INIT_CHECK = "seconds added to CUDA initialization (whole command)"
NATIVE_CHECK = "every check (native is the reference)"
STEP_CHECKS = {"timing": (TIMING_CHECK, BUDGET_TIMING_RATIO),
               "roofline": (KERNEL_REPLAY_CHECK, BUDGET_ROOFLINE_RATIO),
               "roofline-step-replay": (STEP_REPLAY_CHECK, BUDGET_ROOFLINE_RATIO)}


def no_steps(whose):
    return f"no step times (main.py's \"step I: X ms\" lines) from {whose}"


def ms_per_step_of_counters(mode, s):
    """What one step's worth of counters costs `mode` in ms, from its step_summary() entry `s`:
    replay across steps, the sum of a run's profiled steps (one group); kernel replay and ncu,
    whose every profiled step has all the counters, that sum over their count. None without steps."""
    if not s or s["profiled_sum_ms"] is None or not s["per_step"]:
        return None
    return s["profiled_sum_ms"] if mode == "roofline-step-replay" else s["profiled_sum_ms"] / len(s["per_step"])


def each_step(s, most=8):
    """"3: 2555.55, 4: 60.55, 5: 60.60": the median of each profiled step; past `most` steps the
    first 3 and the last 2 (where a window opens and closes) and the count."""
    items = [f"{i}: {ms:.2f}" for i, ms in s["per_step"].items()]
    if len(items) <= most:
        return ", ".join(items)
    return ", ".join(items[:3] + ["..."] + items[-2:]) + f" ({len(items)} steps)"


def step_detail(mode, s):
    """README's "steps (ms)" beside a resnet18 check: what the judged ratio was computed from."""
    if mode == "timing":
        summed = s["sum_ratio_to_native"]
        return (f"median of {len(s['profiled'])} steps {s['profiled_step_ms']:.2f} (p10-p90 {s['p10_ms']:.2f}-"
                f"{s['p90_ms']:.2f}); native's of {len(s['native_same'])}: {s['native_step_ms']:.2f} "
                f"({s['native_p10_ms']:.2f}-{s['native_p90_ms']:.2f})"
                + ("" if summed is None else f"; summed, the window's opening and closing included: {summed:.3f}"))
    return f"{each_step(s)}; summed {s['profiled_sum_ms']:.2f}; native's summed {s['native_sum_ms']:.2f}"


def budget_checks(rows, steps=None, counters=None, missing=None):
    """Issue 8's budget: a list of (workload, mode, check, target, measured, steps, whole_command,
    met) where met is True/False, or None when not measured (measured then says why).

    resnet18 is judged on main.py's step times (`steps`: (workload, mode) -> step_summary()'s
    entry; `steps` column: what the ratio was computed from), with the same ratio of whole-command
    wall times (overhead.csv's `rows`) beside it, not judged (mostly ResNet-18's start-up):
    timing's median step over native's median over the same steps <= 1.05; each roofline mode's
    profiled steps summed over native's same steps summed <= 2.5 (kernel replay: its profiled
    step(s); replay across steps: its group, passes and timing window); ncu's ms per profiled step
    over the mode's ms per step of counters (ms_per_step_of_counters) >= 20. A roofline mode is
    judged only when `counters` ((workload, mode) -> counters_state()) says its trace holds
    counters. cuda_init: seconds added over native by timing and roofline < 0.3, to the
    millisecond of wall_s. `missing` ((workload, mode) -> why it has no row: Bench.missing()) turns
    a mode run without a result into "not measured" rows saying why; without native's row a
    workload gets one row saying the budget cannot be judged."""
    wall = {(r["workload"], r["mode"]): float(r["wall_s"]) for r in rows}
    given = {(r["workload"], r["mode"]): r["ratio_to_native"] for r in rows if r.get("ratio_to_native")}
    steps, counters, missing = steps or {}, counters or {}, missing or {}
    checks = []

    def ran(w, m):
        return (w, m) in wall or (w, m) in missing

    def not_measured(w, m, check, target, why, whole=""):
        checks.append((w, m, check, target, f"not measured: {why}", "", whole, None))

    def without_native(w):
        if (w, "native") in missing:
            not_measured(w, "native", NATIVE_CHECK, "",
                         f"the budget cannot be judged without native: {missing[(w, 'native')]}")

    without_native("resnet18")
    native = wall.get(("resnet18", "native"))
    ncu_key = ("resnet18", "ncu")
    for m, (check, limit) in STEP_CHECKS.items() if native else ():
        key, target = ("resnet18", m), f"<= {limit:g}"
        ncu_target = f">= {BUDGET_FASTER_THAN_NCU:g}"
        with_ncu = m in COUNTERS_MODES and ran(*ncu_key)
        if key in missing:
            not_measured("resnet18", m, check, target, f"{m}: {missing[key]}")
            if with_ncu:
                not_measured("resnet18", m, NCU_CHECK, ncu_target, f"{m}: {missing[key]}")
            continue
        if key not in wall:
            continue
        ok, note = counters.get(key, (None, "counters not checked")) if m in COUNTERS_MODES else (True, "")
        whole = given.get(key) or f"{wall[key] / native:.3f}"  # overhead.csv's
        s = steps.get(key)
        ratio = s and s["ratio_to_native" if m == "timing" else "sum_ratio_to_native"]
        if not ok:
            not_measured("resnet18", m, check, target, note, whole)
        elif not s:
            not_measured("resnet18", m, check, target, no_steps(f"{m}'s runs"), whole)
        elif ratio is None:
            not_measured("resnet18", m, check, target,
                         no_steps(f"native's runs for steps {index_ranges(s['per_step'])}"), whole)
        else:
            checks.append(("resnet18", m, check, target, f"{ratio:.3f}", step_detail(m, s), whole, ratio <= limit))
        if not with_ncu:
            continue
        if ncu_key in missing:
            not_measured("resnet18", m, NCU_CHECK, ncu_target, f"ncu: {missing[ncu_key]}")
            continue
        whole = f"{wall[ncu_key] / wall[key]:.2f}"
        theirs, mine = ms_per_step_of_counters("ncu", steps.get(ncu_key)), ms_per_step_of_counters(m, s)
        if not ok:
            not_measured("resnet18", m, NCU_CHECK, ncu_target, note, whole)
        elif theirs is None:
            not_measured("resnet18", m, NCU_CHECK, ncu_target, no_steps("ncu's run (its profiled steps)"), whole)
        elif not mine:
            not_measured("resnet18", m, NCU_CHECK, ncu_target, no_steps(f"{m}'s runs"), whole)
        else:
            faster = theirs / mine
            detail = (f"ncu {each_step(steps[ncu_key])} ({theirs:.2f} per step); this mode {mine:.2f} per step "
                      "of counters")
            checks.append(("resnet18", m, NCU_CHECK, ncu_target, f"{faster:.2f}", detail, whole,
                           faster >= BUDGET_FASTER_THAN_NCU))
    without_native("cuda_init")
    init = wall.get(("cuda_init", "native"))
    for m in ("timing", "roofline") if init is not None else ():
        key, target = ("cuda_init", m), f"< {BUDGET_INIT_ADDED_S:g}"
        if key in wall:
            added = round(wall[key] - init, 3)  # wall_s has ms resolution
            checks.append(("cuda_init", m, INIT_CHECK, target, f"{added:.3f}", "", "", added < BUDGET_INIT_ADDED_S))
        elif key in missing:
            not_measured("cuda_init", m, INIT_CHECK, target, f"{m}: {missing[key]}")
    return checks
