"""bench/overhead.py without a GPU: stand-in workloads, librfinject path and ncu, checking the
environment each mode gets, the exact overhead.csv columns, the ratios and the skipped modes."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OVERHEAD = os.path.join(ROOT, "bench", "overhead.py")


class OverheadTest(unittest.TestCase):
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
                           capture_output=True, text=True, env=env)
        return p, out

    def test_every_mode_gets_its_environment_and_ratios_are_to_native(self):
        p, out = self.run_overhead()
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "overhead.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "workload,mode,wall_s,ratio_to_native")
        rows = {r["mode"]: r for r in csv.DictReader(lines)}
        self.assertEqual(set(rows), {"native", "timing", "roofline", "ncu"})
        self.assertEqual(rows["native"]["ratio_to_native"], "1.000")
        for m in ("timing", "roofline", "ncu"):  # each ratio is its wall time over native's
            ratio = float(rows[m]["ratio_to_native"])
            self.assertGreater(float(rows[m]["wall_s"]), 0, m)
            expected = float(rows[m]["wall_s"]) / float(rows["native"]["wall_s"])
            self.assertAlmostEqual(ratio, expected, delta=0.01 * expected + 0.01)  # wall_s is rounded to ms
        with open(self.log) as f:
            envs = [json.loads(l) for l in f]
        self.assertEqual(len(envs), 4)
        native, timing, roofline, ncu = envs
        self.assertIsNone(native["CUDA_INJECTION64_PATH"])
        self.assertEqual(timing["CUDA_INJECTION64_PATH"], self.inject)
        self.assertEqual(timing["NVTX_INJECTION64_PATH"], self.inject)
        self.assertEqual(timing["RFPROF_MODE"], "timing")
        self.assertEqual(roofline["RFPROF_MODE"], "counters")
        self.assertTrue(roofline["RFPROF_OUTPUT"].endswith(os.path.join("traces", "fake-roofline.rftrace")))
        self.assertEqual(ncu["UNDER_NCU"], "1")
        self.assertIsNone(ncu["RFPROF_MODE"])
        with open(os.path.join(out, "README.md")) as f:
            readme = f.read()
        self.assertIn("roofline-step-replay: replay across steps needs a workload with one cudaProfilerStart/Stop", readme)
        self.assertIn("| fake | ncu |", readme)
        with open(os.path.join(out, "runs.csv")) as f:
            runs = list(csv.DictReader(f))
        self.assertEqual(len(runs), 4)
        self.assertIn("RFPROF_MODE=counters", runs[2]["command"])

    def test_step_replay_mode_runs_each_step_as_a_window(self):
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        try:
            import overhead
        finally:
            sys.path.pop(0)
        args = type("Args", (), {"inject": "/x/librfinject.so", "ncu": "ncu"})()
        argv, env = overhead.command_for("roofline-step-replay", "resnet18", ["python3", "main.py", "--dummy"],
                                         False, args, self.tmp)
        # ResNet-18 profiles enough steps for the passes and the timing window (3 by default),
        # whatever --resnet-args says for the other modes; main.py takes the last --profile-iters.
        self.assertEqual(argv, ["python3", "main.py", "--dummy", "--window-per-step", "--profile-iters", "3"])
        args.step_replay_steps = 8
        argv, _ = overhead.command_for("roofline-step-replay", "resnet18", ["python3", "main.py"], False, args, self.tmp)
        self.assertEqual(argv, ["python3", "main.py", "--window-per-step", "--profile-iters", "8"])
        argv, _ = overhead.command_for("roofline-step-replay", "many_kernels", ["many_kernels", "--steps", "20"],
                                       False, args, self.tmp)
        self.assertEqual(argv, ["many_kernels", "--steps", "20", "--window-per-step"])  # its own 20 windows
        self.assertEqual(env["RFPROF_REPLAY"], "step")
        self.assertEqual(env["RFPROF_MODE"], "counters")
        self.assertEqual(env["RFPROF_PROFILE_FROM_START"], "off")
        argv, env = overhead.command_for("roofline", "resnet18", ["python3", "main.py"], False, args, self.tmp)
        self.assertNotIn("RFPROF_REPLAY", env)
        self.assertEqual(argv, ["python3", "main.py"])

    def test_a_windowed_workload_runs_in_every_mode_step_replay_included(self):
        # --windowed-workload: profile-from-start off, and --window-per-step under step replay, as
        # resnet18 and many_kernels; the whole benchmark, not command_for alone.
        work = self.script("windows.py", f"""
            import json, os, sys
            keys = ["CUDA_INJECTION64_PATH", "RFPROF_MODE", "RFPROF_PROFILE_FROM_START", "RFPROF_REPLAY",
                    "UNDER_NCU"]
            with open({self.log!r}, "a") as f:
                f.write(json.dumps({{"argv": sys.argv[1:], **{{k: os.environ.get(k) for k in keys}}}}) + "\\n")
            """)
        ncu = self.script("ncu-windows", """
            import os, sys
            args = sys.argv[1:]
            assert args[args.index("--profile-from-start") + 1] == "off", args
            cmd = args[args.index("-o") + 2:]
            os.environ["UNDER_NCU"] = "1"
            os.execvp(cmd[0], cmd)
            """)
        out = os.path.join(self.tmp, "results")
        p = subprocess.run([sys.executable, OVERHEAD, "--out", out, "--inject", self.inject, "--ncu", ncu,
                            "--windowed-workload", f"steps={work} --steps 4", "--workloads", "steps"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "overhead.csv")) as f:
            rows = {r["mode"]: r for r in csv.DictReader(f)}
        self.assertEqual(set(rows), {"native", "timing", "roofline", "roofline-step-replay", "ncu"})
        with open(self.log) as f:
            runs = [json.loads(l) for l in f]
        self.assertEqual(len(runs), 5)
        native, timing, roofline, step, ncu_run = runs
        self.assertIsNone(native["CUDA_INJECTION64_PATH"])
        for r in (timing, roofline, step):
            self.assertEqual(r["RFPROF_PROFILE_FROM_START"], "off", r)
        self.assertEqual(step["RFPROF_REPLAY"], "step")
        self.assertEqual(step["RFPROF_MODE"], "counters")
        self.assertEqual(step["argv"], ["--steps", "4", "--window-per-step"])  # one window per step
        for r in (native, timing, roofline, ncu_run):
            self.assertIsNone(r["RFPROF_REPLAY"], r)
            self.assertEqual(r["argv"], ["--steps", "4"], r)
        self.assertEqual(ncu_run["UNDER_NCU"], "1")
        with open(os.path.join(out, "README.md")) as f:
            self.assertNotIn("replay across steps needs a workload", f.read())  # not skipped
        # The same command as --workload (profile-from-start on) skips step replay, and says why.
        p, out = self.run_overhead()
        with open(os.path.join(out, "README.md")) as f:
            self.assertIn("replay across steps needs a workload", f.read())

    def test_the_step_pass_start_knob_reaches_step_replay_runs_only(self):
        # librfinject refuses RFPROF_STEP_PASS_START without RFPROF_REPLAY=step: set for the whole
        # benchmark (the A/B in validation/README.md), it must not reach the other modes' runs.
        p, out = self.run_overhead(env=dict(os.environ, RFPROF_STEP_PASS_START="window"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.log) as f:
            envs = [json.loads(l) for l in f]
        self.assertEqual(len(envs), 4)  # the fake workload has no --window-per-step: no step mode
        for e in envs:
            self.assertIsNone(e["RFPROF_STEP_PASS_START"], e)
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        try:
            import overhead
        finally:
            sys.path.pop(0)
        args = type("Args", (), {"inject": "/x/librfinject.so", "ncu": "ncu"})()
        os.environ["RFPROF_STEP_PASS_START"] = "window"
        try:
            _, env = overhead.command_for("roofline-step-replay", "resnet18", ["python3"], False, args, self.tmp)
            self.assertEqual(env["RFPROF_STEP_PASS_START"], "window")
            _, env = overhead.command_for("roofline", "resnet18", ["python3"], False, args, self.tmp)
            self.assertNotIn("RFPROF_STEP_PASS_START", env)
        finally:
            del os.environ["RFPROF_STEP_PASS_START"]

    def test_budget_checks_judge_the_rows_against_issue_8s_targets(self):
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        try:
            import overhead
        finally:
            sys.path.pop(0)
        # The H100 rows of 2026-11-23 (bench/results), with a step-replay row added.
        rows = [{"workload": w, "mode": m, "wall_s": t, "ratio_to_native": ""} for w, m, t in [
            ("cuda_init", "native", "0.516"), ("cuda_init", "timing", "0.717"), ("cuda_init", "roofline", "0.816"),
            ("resnet18", "native", "13.135"), ("resnet18", "timing", "11.977"), ("resnet18", "roofline", "151.303"),
            ("resnet18", "roofline-step-replay", "20.000"), ("resnet18", "ncu", "83.730")]]
        got = {(w, m, check): (target, measured, met) for w, m, check, target, measured, met in
               overhead.budget_checks(rows)}
        self.assertEqual(got[("resnet18", "timing", "wall time / native")], ("<= 1.05", "0.912", True))
        self.assertEqual(got[("resnet18", "roofline", "wall time / native")], ("<= 2.5", "11.519", False))
        self.assertEqual(got[("resnet18", "roofline-step-replay", "wall time / native")], ("<= 2.5", "1.523", True))
        self.assertEqual(got[("resnet18", "roofline-step-replay", "ncu's wall time / this mode's")],
                         (">= 20", "4.19; on the time added to native: 10.3x", False))
        self.assertEqual(got[("resnet18", "roofline", "ncu's wall time / this mode's")][2], False)
        self.assertEqual(got[("cuda_init", "timing", "seconds added to CUDA initialization")], ("< 0.3", "0.201", True))
        # 0.816 - 0.516 is 0.3 s: not less than 0.3.
        self.assertEqual(got[("cuda_init", "roofline", "seconds added to CUDA initialization")][2], False)
        self.assertEqual(len(got), 7)
        # Without the native run nothing is judged; without ncu, no "faster than ncu" check.
        self.assertEqual(overhead.budget_checks([r for r in rows if r["mode"] != "native"]), [])
        no_ncu = overhead.budget_checks([r for r in rows if r["mode"] != "ncu"])
        self.assertFalse(any("ncu" in c[2] for c in no_ncu))
        self.assertEqual(len(no_ncu), 5)

    def test_the_readme_says_which_budget_checks_were_met(self):
        p, out = self.run_overhead("--workload", f"resnet18={self.workload}", "--workloads", "fake,resnet18",
                                   "--modes", "native,timing,ncu")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "README.md")) as f:
            readme = f.read()
        self.assertIn("Against issue 8's budget", readme)
        self.assertRegex(readme, r"\| resnet18 \| timing \| wall time / native \| <= 1.05 \| [0-9.]+ \| (yes|NO) \|")
        self.assertNotIn("| fake | timing | wall time", readme)  # the budget is ResNet-18's

    def test_launch_calls_are_read_from_trace_json_in_time_order(self):
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        try:
            import overhead
        finally:
            sys.path.pop(0)
        dest = os.path.join(self.tmp, "analysis", "w-roofline")
        os.makedirs(dest)
        # trace.json's "dur" is in microseconds; events of other categories are not calls.
        events = [{"ph": "X", "cat": "cuda_api", "ts": 30.0, "dur": 2000.0},
                  {"ph": "X", "cat": "kernel", "ts": 11.0, "dur": 90000.0},
                  {"ph": "X", "cat": "cuda_api", "ts": 10.0, "dur": 2400000.0},  # the first call
                  {"ph": "X", "cat": "cuda_api", "ts": 20.0, "dur": 1000.0},
                  {"ph": "X", "cat": "cuda_api", "ts": 40.0, "dur": 4000.0}]
        with open(os.path.join(dest, "trace.json"), "w") as f:
            json.dump({"traceEvents": events}, f)
        self.assertEqual(overhead.launch_calls(self.tmp, "w", "roofline"), (4, 2400.0, 2.0, 2400.0))
        self.assertIsNone(overhead.launch_calls(self.tmp, "w", "timing"))  # no analysis
        with open(os.path.join(dest, "trace.json"), "w") as f:
            json.dump({"traceEvents": events[2:3]}, f)
        self.assertEqual(overhead.launch_calls(self.tmp, "w", "roofline"), (1, 2400.0, None, 2400.0))

    @unittest.skipUnless(os.environ.get("RFANALYZE"), "RFANALYZE (the built rfanalyze) not set: run through ctest")
    def test_costs_come_from_each_traces_profiler_overhead_records(self):
        # The workload leaves a real format 1.2 trace (write_sample: 3 launches, counters.enable
        # 2.3 s once, launch.counters 5 calls in 1500 ns): finished in timing mode, only the flushed
        # .part in roofline mode, as a run stopped at --timeout leaves it.
        seed = os.path.join(ROOT, "tests", "fuzz", "corpus", "trace_reader", "overhead-1.2.rftrace")
        work = self.script("traced.py", f"""
            import os, shutil
            out = os.environ.get("RFPROF_OUTPUT")
            if out:
                shutil.copy({seed!r}, out if os.environ["RFPROF_MODE"] == "timing" else out + ".part")
            """)
        # A finished trace an earlier invocation left in the same --out must not be read as this
        # run's: here it is garbage, which rfanalyze would refuse.
        os.makedirs(os.path.join(self.tmp, "results", "traces"))
        with open(os.path.join(self.tmp, "results", "traces", "traced-roofline.rftrace"), "wb") as f:
            f.write(b"not a trace")
        p, out = self.run_overhead("--workload", f"traced={work}", "--workloads", "traced",
                                   "--modes", "native,timing,roofline", "--rfanalyze", os.environ["RFANALYZE"])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "costs.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "workload,mode,launches,phase,count,total_ns,mean_ns,max_ns,ns_per_launch")
        rows = {(r["mode"], r["phase"]): r for r in csv.DictReader(lines)}
        self.assertEqual(set(rows), {(m, ph) for m in ("timing", "roofline")
                                     for ph in ("counters.enable", "launch.counters")})
        lc = rows[("roofline", "launch.counters")]
        self.assertEqual((lc["launches"], lc["count"], lc["total_ns"], lc["max_ns"]), ("3", "5", "1500", "400"))
        self.assertEqual(lc["ns_per_launch"], "500.0")
        with open(os.path.join(out, "README.md")) as f:
            readme = f.read()
        # launch call under counters: 1500 ns / 5 calls = 0.0003 ms; set-up: counters.enable's 2.3 s;
        # no callback, decode or write phase recorded: blank.
        self.assertIn("| traced | roofline | 3 | 3/3 |  | 0.0003 |  |  | 2300.0 |", readme)
        self.assertIn("| traced | timing | 3 |  |", readme)  # timing mode: no counters expected
        # The seed's three launch calls last 5 ns each (write_sample).
        self.assertIn("| traced | roofline | 3 | 0.000 | 0.000 | 0.000 |", readme)
        with open(os.path.join(out, "overhead.csv")) as f:  # counters for every launch: a result
            self.assertEqual({r["mode"] for r in csv.DictReader(f)}, {"native", "timing", "roofline"})

    @unittest.skipUnless(os.environ.get("RFANALYZE") and os.environ.get("MAKE_SYNTHETIC_TRACE"),
                         "RFANALYZE and MAKE_SYNTHETIC_TRACE not set: run through ctest")
    def test_a_roofline_run_without_counters_is_no_result(self):
        # CUPTI refused the counters (as it did silently in the first H100 big_memory run): the run
        # finished in timing-mode time. Its trace, counters mode, has launches but no counters.
        trace = os.path.join(self.tmp, "no-counters.rftrace")
        subprocess.run([os.environ["MAKE_SYNTHETIC_TRACE"], "--no-counters", trace, "200"], check=True,
                       capture_output=True)
        work = self.script("refused.py", f"""
            import os, shutil, sys
            out = os.environ.get("RFPROF_OUTPUT")
            if out:
                shutil.copy({trace!r}, out)
                if os.environ["RFPROF_MODE"] == "counters":
                    print("app: step 1")
                    print("rfprof: counters unavailable on device 0 (GH100): CUPTI_ERROR_OUT_OF_MEMORY",
                          file=sys.stderr)
            """)
        p, out = self.run_overhead("--workload", f"refused={work}", "--workloads", "refused",
                                   "--modes", "native,timing,roofline", "--rfanalyze", os.environ["RFANALYZE"])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "overhead.csv")) as f:
            self.assertEqual({r["mode"] for r in csv.DictReader(f)}, {"native", "timing"})
        with open(os.path.join(out, "README.md")) as f:
            readme = f.read()
        self.assertRegex(readme, r"- refused, roofline: ran \([0-9.]+ s\) but recorded counters for none of its 200 "
                                 r"launches: rfprof: counters unavailable on device 0 \(GH100\): "
                                 r"CUPTI_ERROR_OUT_OF_MEMORY")
        self.assertIn("| refused | roofline | 200 | 0/200 |", readme)
        with open(os.path.join(out, "logs", "refused-roofline-0.log")) as f:
            self.assertIn("app: step 1", f.read())  # the run's own output is kept

    def test_runs_past_the_budget_are_skipped_and_listed(self):
        # Budget 12 s, --min-run 11 s, native sleeps 2 s: native starts (12 s left) and finishes
        # whatever its start-up costs up to 10 s; then at most 10 s are left, under the 11 s a run
        # needs, so timing and roofline are never started. No margin depends on the machine's load
        # (a 2.99 s budget with 1 s runs failed once when start-ups took 1 s on a busy CI machine).
        slow = self.script("slow.py", "import time; time.sleep(2.0)")
        p, out = self.run_overhead("--workload", f"slow={slow}", "--workloads", "slow",
                                   "--modes", "native,timing,roofline", "--budget", "12", "--min-run", "11")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "runs.csv")) as f:
            runs = list(csv.DictReader(f))
        self.assertEqual([(r["mode"], r["exit_status"]) for r in runs], [("native", "0")])
        with open(os.path.join(out, "README.md")) as f:
            readme = f.read()
        for mode in ("timing", "roofline"):
            self.assertIn(f"slow, {mode}: not run: the --budget of 12 s was used up", readme)

    def test_a_run_gets_what_is_left_of_the_budget(self):
        # Budget 3 s and the default --min-run of 1 s: native (sleeping 30 s) is stopped at the
        # budget, so a single slow run cannot take the whole machine's time; timing then has less
        # than 1 s left and is not started.
        slow = self.script("slow.py", "import time; time.sleep(30.0)")
        p, out = self.run_overhead("--workload", f"slow={slow}", "--workloads", "slow",
                                   "--modes", "native,timing", "--budget", "3")
        with open(os.path.join(out, "runs.csv")) as f:
            runs = list(csv.DictReader(f))
        self.assertEqual(p.returncode, 1)  # no result
        self.assertEqual([(r["mode"], r["exit_status"]) for r in runs], [("native", "timeout")])

    def test_failed_runs_are_not_results_and_are_reported(self):
        bad = self.script("bad.py", "import sys; print('bad: could only allocate 0 GiB'); print(); sys.exit(3)")
        p, out = self.run_overhead("--workload", f"bad={bad}", "--workloads", "bad", "--modes", "native,timing")
        self.assertEqual(p.returncode, 1)  # no result at all
        with open(os.path.join(out, "overhead.csv")) as f:
            self.assertEqual(f.read().splitlines(), ["workload,mode,wall_s,ratio_to_native"])
        with open(os.path.join(out, "README.md")) as f:
            self.assertIn("bad, native: no run exited 0 (last: 3; its last line: bad: could only allocate 0 GiB)",
                          f.read())

    def test_bad_arguments_name_the_problem(self):
        p, _ = self.run_overhead("--windowed-workload", "nocommand")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--windowed-workload 'nocommand': expected NAME=COMMAND", p.stderr)
        for extra, msg in ((["--modes", "timing"], "must include native"),
                           (["--modes", "native,fast"], "unknown mode 'fast'"),
                           (["--workloads", "nope"], "unknown workload 'nope'"),
                           (["--workload", "broken"], "expected NAME=COMMAND"),
                           (["--budget", "-1"], "--budget at least 0"),
                           (["--min-run", "0"], "--min-run must be positive")):
            p = subprocess.run([sys.executable, OVERHEAD, "--out", self.tmp, *extra], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, extra)
            self.assertIn(msg, p.stderr)


if __name__ == "__main__":
    unittest.main()
