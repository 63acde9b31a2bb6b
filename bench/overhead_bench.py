"""What one bench/overhead.py invocation measured so far, and its files (README.md and the tables)."""
import datetime
import os
import shlex
import statistics
import sys

from overhead_common import COST_COLUMNS, COUNTERS_MODES, OVERHEAD_COLUMNS, RUN_COLUMNS, STEP_COLUMNS, WARMUP
from overhead_run import Stop, csv_text, last_line, signal_name, write_atomic
from overhead_steps import read_steps, step_rows, step_summary
from overhead_costs import cost_summary, counters_state
from overhead_budget import budget_checks, each_step

class Bench:
    """What one invocation measured so far, and its files (write() after every run)."""

    def __init__(self, out, argv, args, chosen, modes, plan, skipped, versions_):
        self.out, self.argv, self.args, self.chosen, self.modes = out, argv, args, chosen, modes
        self.plan, self.skipped, self.versions = plan, skipped, versions_
        self.runs = []            # dicts: workload, mode, repeat, wall, exit_status, command, log
        self.not_run = {}         # (workload, mode) -> (count, why): counted runs never started
        self.costs, self.coverage, self.calls = [], {}, {}
        self.unanalyzed = {}      # (workload, mode) -> why its trace has no analysis
        self.analysis = "pending"  # "pending", "done", or why the traces were not analyzed

    def counted(self, w, m, ok_only=False):
        return [r for r in self.runs if r["workload"] == w and r["mode"] == m and r["repeat"] != WARMUP
                and (not ok_only or r["exit_status"] == 0)]

    def overhead_rows(self):
        """overhead.csv: the median wall time of each mode's counted runs that exited 0."""
        rows = []
        for w in self.chosen:
            ok = {m: [r["wall"] for r in self.counted(w, m, True)] for m in self.modes}
            native = statistics.median(ok["native"]) if ok.get("native") else None
            for m in self.modes:
                if ok[m]:
                    wall = statistics.median(ok[m])
                    rows.append({"workload": w, "mode": m, "wall_s": f"{wall:.3f}",
                                 "ratio_to_native": f"{wall / native:.3f}" if native else ""})
        return rows

    def missing(self):
        """(workload, mode) -> why a mode that was to be run has no overhead.csv row: "no run
        exited 0 (last: how it ended; its last line: ...)" or "not run: why"."""
        out = {}
        for w in self.chosen:
            for m in self.modes:
                mine = self.counted(w, m)
                if mine and not self.counted(w, m, True):
                    said = last_line(mine[-1]["log"]) if mine[-1].get("log") else ""
                    out[(w, m)] = (f"no run exited 0 (last: {run_outcome(mine[-1])}"
                                   + (f"; its last line: {said}" if said else "") + ")")
                elif not mine and (w, m) in self.not_run:
                    out[(w, m)] = f"not run: {self.not_run[(w, m)][1]}"
        return out

    def steps(self):
        samples = {}
        for w in self.chosen:
            for m in self.modes:
                samples[(w, m)] = [read_steps(r["log"]) for r in self.counted(w, m, True)]
        return step_summary(samples)

    def counters(self):
        """(workload, mode) -> counters_state() of each counters mode with a counted run."""
        out = {}
        for w in self.chosen:
            for m in COUNTERS_MODES:
                mine = self.counted(w, m)
                if not mine:
                    continue
                if self.analysis == "pending":
                    unchecked = "its trace is analyzed once every run has ended"
                elif self.analysis != "done":
                    unchecked = self.analysis
                else:
                    unchecked = self.unanalyzed.get((w, m), f"its trace could not be analyzed "
                                                            f"(logs/{w}-{m}-rfanalyze.log)")
                out[(w, m)] = counters_state(self.coverage.get((w, m)), mine[-1]["log"], unchecked)
        return out

    def write(self):
        """runs.csv, overhead.csv, steps.csv, costs.csv and README.md, each written aside and renamed."""
        out = self.out
        write_atomic(os.path.join(out, "runs.csv"), csv_text(RUN_COLUMNS, [
            {k: (f"{r['wall']:.3f}" if k == "wall_s" else r[k]) for k in RUN_COLUMNS} for r in self.runs]))
        rows = self.overhead_rows()
        write_atomic(os.path.join(out, "overhead.csv"), csv_text(OVERHEAD_COLUMNS, rows))
        steps = self.steps()
        write_atomic(os.path.join(out, "steps.csv"), csv_text(STEP_COLUMNS, step_rows(self.chosen, self.modes, steps)))
        write_atomic(os.path.join(out, "costs.csv"), csv_text(COST_COLUMNS, self.costs))
        write_atomic(os.path.join(out, "README.md"), self.readme(rows, steps))
        return rows

    # README.md: a function per section; what the columns mean is bench/overhead.md's.

    def readme(self, rows, steps):
        counters, missing = self.counters(), self.missing()
        return "".join([self.readme_head(), self.whole_command_table(rows, counters), self.steps_table(steps),
                        self.budget_table(rows, steps, counters, missing), self.costs_table(), self.calls_table(),
                        self.not_measured_list(missing),
                        "\nEvery command with its environment, and every run with how it ended: runs.csv.\n"])

    def readme_head(self):
        args = self.args
        repeat_modes = [m for m in self.modes if m in args.repeat_modes]
        once = [m for m in self.modes if m not in args.repeat_modes]
        text = f"# rfprof overhead, {datetime.date.today().isoformat()}\n\n"
        text += "".join(f"- {k}: {val}\n" for k, val in self.versions.items())
        cmd = " ".join(shlex.quote(a) for a in (self.argv if self.argv is not None else sys.argv[1:]))
        text += (f"\nCommand: `bench/overhead.py {cmd}`: per workload {args.warmup_runs} native warm-up run(s), "
                 f"not counted, then {args.repeats} round(s) of {', '.join(repeat_modes) or 'no mode'} (each "
                 "round every one of them once, in this order)"
                 + (f", then {', '.join(once)} once" if once else "") + "; each figure is the median of a "
                 "mode's runs that exited 0. What each table, column and check means: bench/overhead.md, "
                 "in rfprof's sources.\n")
        if Stop.signum:
            text += (f"\n**Interrupted by {signal_name(Stop.signum)}** after {len(self.runs)} run(s): the run in "
                     "progress was stopped and nothing more was run; the tables hold the runs that ended before.\n")
        return text

    def whole_command_table(self, rows, counters):
        text = ("\n## Whole command (overhead.csv)\n\nStart to exit; for resnet18 mostly start-up, so its budget is "
                "judged on the steps below. A run stopped at its time limit ran at least wall_s.\n\n"
                "| workload | mode | wall_s | ratio_to_native | runs | note |\n|---|---|---|---|---|---|\n")
        by_key = {(r["workload"], r["mode"]): r for r in rows}
        natives = {r["workload"]: float(r["wall_s"]) for r in rows if r["mode"] == "native"}
        for w in self.chosen:
            for m in self.modes:
                mine, ok = self.counted(w, m), self.counted(w, m, True)
                if not mine:
                    continue
                # Whether it measured counters: only of a mode with a row (a wall time to judge).
                notes = [counters[(w, m)][1]] if (w, m) in by_key and (w, m) in counters else []
                other = [run_outcome(r) for r in mine if r["exit_status"] != 0]
                planned = sum(1 for x in self.plan if x[0] == w and x[1] == m and x[2] != WARMUP)
                runs = f"{len(ok)} of {planned}" if len(ok) != planned else str(len(ok))
                if other:
                    notes.append("; ".join(other))
                if (w, m) in self.not_run:
                    notes.append(f"{self.not_run[(w, m)][0]} not run: {self.not_run[(w, m)][1]}")
                if (w, m) in by_key:
                    r = by_key[(w, m)]
                    if len(ok) > 1:
                        notes.insert(0, "runs: " + " / ".join(f"{x['wall']:.3f}" for x in ok))
                    text += table_row([w, m, r["wall_s"], r["ratio_to_native"], runs, "; ".join(notes)])
                else:
                    longest = max(mine, key=lambda x: x["wall"])
                    lower = longest["exit_status"] in ("timeout", "interrupted")
                    wall = f">= {longest['wall']:.3f}" if lower else ""
                    ratio = f">= {longest['wall'] / natives[w]:.3f}" if lower and natives.get(w) else ""
                    text += table_row([w, m, wall, ratio, runs, "not in overhead.csv: " + "; ".join(notes)])
        return text

    def steps_table(self, steps):
        if not steps:
            return ""
        text = ("\n## Steps (steps.csv)\n\nexamples/imagenet/main.py's own step times, each from a synchronize "
                "before the step to the end of the cudaProfilerStop it makes (a profiler's work when a window "
                "opens or closes is in the step); p10-p90: 10th to 90th percentile of the steps, all runs "
                "pooled.\n\n"
                "| workload | mode | runs | profiled steps: median ms each | median step ms (p10-p90) | "
                "native, same steps: median ms (p10-p90) | median ratio | summed ms | native's same steps "
                "summed (ms) | summed ratio | unprofiled_step_ms |\n|---|---|---|---|---|---|---|---|---|---|---|\n")

        def ms(x):
            return "" if x is None else f"{x:.2f}"

        def spread(med, lo, hi):
            return "" if med is None else f"{med:.2f} ({lo:.2f}-{hi:.2f})"

        def ratio(x):
            return "" if x is None else f"{x:.3f}"
        for w in self.chosen:
            for m in self.modes:
                s = steps.get((w, m))
                if s:
                    text += table_row([w, m, s["runs"], each_step(s),
                                       spread(s["profiled_step_ms"], s["p10_ms"], s["p90_ms"]),
                                       spread(s["native_step_ms"], s["native_p10_ms"], s["native_p90_ms"]),
                                       ratio(s["ratio_to_native"]), ms(s["profiled_sum_ms"]), ms(s["native_sum_ms"]),
                                       ratio(s["sum_ratio_to_native"]), ms(s["unprofiled_step_ms"])])
        return text

    def budget_table(self, rows, steps, counters, missing):
        checks = budget_checks(rows, steps, counters, missing)
        if not checks:
            return ""
        text = ("\n## Against issue 8's budget\n\nresnet18 judged on its step times (Steps above), each check "
                "saying which ratio; \"whole command\": the same ratio of overhead.csv's wall times, not judged. "
                "A roofline mode is judged only when its trace holds counters.\n\n"
                "| workload | mode | check | target | measured (judged) | steps (ms) | whole command (not judged) "
                "| met |\n|---|---|---|---|---|---|---|---|\n")
        for w, m, check, target, measured, detail, whole, met in checks:
            verdict = "not measured" if met is None else ("yes" if met else "NO")
            text += table_row([w, m, check, target, measured, detail, whole, verdict])
        return text

    def costs_table(self):
        if not (self.costs or self.coverage):
            return ""
        text = ("\n## Where rfprof's own time went (costs.csv)\n\nFrom each rfprof mode's last trace (its "
                "ProfilerOverhead records); the per-launch figures are costs.csv's ns_per_launch.\n\n"
                "| workload | mode | launches | with counters | callbacks ns/launch "
                "| launch call under counters (ms) | decode ns/launch | write ns/launch | set-up ms |\n"
                "|---|---|---|---|---|---|---|---|---|\n")
        return text + "".join(table_row(r) for r in cost_summary(self.costs, self.coverage))

    def calls_table(self):
        if not self.calls:
            return ""
        text = ("\nLaunch calls (trace.json's launch API calls, in time order; under kernel replay a call holds its "
                "kernel's replay passes and memory save and restore, the first also the Range Profiler's set-up).\n\n"
                "| workload | mode | calls | first call (ms) | median of the others (ms) | longest (ms) |\n"
                "|---|---|---|---|---|---|\n")
        for (w, m), (n, first, median, longest) in self.calls.items():
            text += table_row([w, m, n, f"{first:.3f}", "" if median is None else f"{median:.3f}", f"{longest:.3f}"])
        return text

    def not_measured_list(self, missing):
        lines = [f"- {w}, {m}: {why}" for w, m, why in self.skipped]
        lines += [f"- {w}, {m}: {why}" for (w, m), why in missing.items()]
        if self.analysis not in ("pending", "done"):
            lines.append(f"- every rfprof run, per-phase costs: {self.analysis}")
        return "\n## Not measured\n\n" + "\n".join(lines) + "\n" if lines else ""


def table_row(cells):
    """A Markdown table row; a "|" in a cell (a log's last line) would split it."""
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |\n"


def run_outcome(run):
    """How a run that did not exit 0 ended, e.g. "stopped at its time limit after >= 200.000 s"."""
    status, wall = run["exit_status"], run["wall"]
    if status in ("timeout", "interrupted"):
        return f"{'stopped at its time limit' if status == 'timeout' else 'interrupted'} after >= {wall:.3f} s"
    if isinstance(status, int):
        return f"exited {status} after {wall:.3f} s"
    return str(status)
