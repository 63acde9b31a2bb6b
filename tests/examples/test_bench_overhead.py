"""bench/overhead.py without a GPU (stand-ins: overhead_fakes.py): the environment each mode gets,
the exact overhead.csv columns and ratios, the runs' order and repeats, time limits, the budget of
the whole invocation, interrupts and bad arguments. The tables it writes (steps.csv, costs.csv, the
budget judged on step times, README.md): test_bench_overhead_tables.py."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

from overhead_fakes import FAKE_RFANALYZE, OVERHEAD, ROOT, OverheadTestBase, import_overhead, kill_if_running, pids_in, running


class OverheadTest(OverheadTestBase):
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
        self.assertEqual(len(envs), 5)  # the native warm-up run, not counted, then each mode
        warmup, native, timing, roofline, ncu = envs
        self.assertEqual(warmup, native)
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
        self.assertEqual([(r["mode"], r["repeat"]) for r in runs],
                         [("native", "warmup"), ("native", "0"), ("timing", "0"), ("roofline", "0"), ("ncu", "0")])
        self.assertIn("RFPROF_MODE=counters", runs[3]["command"])

    def test_step_replay_mode_runs_each_step_as_a_window(self):
        overhead = import_overhead()
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
        self.assertEqual(len(runs), 6)
        warmup, native, timing, roofline, step, ncu_run = runs
        self.assertEqual(warmup, native)
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
        self.assertEqual(len(envs), 5)  # a warm-up; the fake workload has no --window-per-step: no step mode
        for e in envs:
            self.assertIsNone(e["RFPROF_STEP_PASS_START"], e)
        overhead = import_overhead()
        args = type("Args", (), {"inject": "/x/librfinject.so", "ncu": "ncu"})()
        os.environ["RFPROF_STEP_PASS_START"] = "window"
        try:
            _, env = overhead.command_for("roofline-step-replay", "resnet18", ["python3"], False, args, self.tmp)
            self.assertEqual(env["RFPROF_STEP_PASS_START"], "window")
            _, env = overhead.command_for("roofline", "resnet18", ["python3"], False, args, self.tmp)
            self.assertNotIn("RFPROF_STEP_PASS_START", env)
        finally:
            del os.environ["RFPROF_STEP_PASS_START"]

    def test_runs_past_the_budget_are_skipped_and_listed(self):
        # Budget 12 s, --min-run 11 s, native sleeps 2 s: native starts (12 s left) and finishes
        # whatever its start-up costs up to 10 s; then at most 10 s are left, under the 11 s a run
        # needs, so timing and roofline are never started. No margin depends on the machine's load
        # (a 2.99 s budget with 1 s runs failed once when start-ups took 1 s on a busy CI machine).
        slow = self.script("slow.py", "import time; time.sleep(2.0)")
        p, out = self.run_overhead("--workload", f"slow={slow}", "--workloads", "slow",
                                   "--modes", "native,timing,roofline", "--budget", "12", "--min-run", "11",
                                   "--warmup-runs", "0")
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
                                   "--modes", "native,timing", "--budget", "3", "--warmup-runs", "0")
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
            self.assertRegex(f.read(), r"bad, native: no run exited 0 \(last: exited 3 after [0-9.]+ s; its last line: "
                                       r"bad: could only allocate 0 GiB\)")

    def test_bad_arguments_name_the_problem(self):
        p, _ = self.run_overhead("--windowed-workload", "nocommand")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--windowed-workload 'nocommand': expected NAME=COMMAND", p.stderr)
        for extra, msg in ((["--modes", "timing"], "must include native"),
                           (["--modes", "native,fast"], "unknown mode 'fast'"),
                           (["--workloads", "nope"], "unknown workload 'nope'"),
                           (["--workload", "broken"], "expected NAME=COMMAND"),
                           (["--budget", "-1"], "--budget at least 0"),
                           (["--min-run", "0"], "--min-run must be positive"),
                           (["--kill-grace", "-1"], "--kill-grace must be at least 0"),
                           (["--warmup-runs", "-1"], "--warmup-runs must be at least 0"),
                           (["--modes", "native,timing", "--repeat-modes", "ncu"],
                            "--repeat-modes: 'ncu' is not one of --modes")):
            p = subprocess.run([sys.executable, OVERHEAD, "--out", self.tmp, *extra], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, extra)
            self.assertIn(msg, p.stderr)


    def test_runs_are_warmed_up_then_interleaved_and_the_median_is_reported(self):
        p, out = self.run_overhead("--repeats", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        order = [(r["mode"], r["repeat"]) for r in self.read_csv(out, "runs.csv")]
        self.assertEqual(order, [("native", "warmup"),
                                 ("native", "0"), ("timing", "0"), ("roofline", "0"), ("ncu", "0"),
                                 ("native", "1"), ("timing", "1"), ("roofline", "1"), ("ncu", "1")])
        with open(self.log) as f:
            self.assertEqual(len(f.readlines()), 9)
        # --repeat-modes: the others once, after the rounds (ncu and kernel replay take minutes).
        shutil.rmtree(out)
        p, out = self.run_overhead("--repeats", "3", "--repeat-modes", "native,timing", "--warmup-runs", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        order = [(r["mode"], r["repeat"]) for r in self.read_csv(out, "runs.csv")]
        self.assertEqual(order, [("native", "warmup"), ("native", "warmup")]
                         + [(m, str(r)) for r in range(3) for m in ("native", "timing")]
                         + [("roofline", "0"), ("ncu", "0")])
        self.assertIn("3 round(s) of native, timing", self.readme(out))
        # The median of the counted runs that exited 0: not the fastest, not the warm-up.
        overhead = import_overhead()
        bench = overhead.Bench(self.tmp, [], None, ["w"], ["native", "timing"], [], [], {})
        for m, r, wall, status in (("native", "warmup", 9.0, 0), ("native", 0, 0.2, 0), ("timing", 0, 0.1, 0),
                                   ("native", 1, 0.2, 0), ("timing", 1, 0.5, 0), ("native", 2, 0.4, 0),
                                   ("timing", 2, 0.3, 0), ("timing", 3, 0.05, "timeout")):
            bench.runs.append({"workload": "w", "mode": m, "repeat": r, "wall": wall, "exit_status": status})
        self.assertEqual(bench.overhead_rows(), [
            {"workload": "w", "mode": "native", "wall_s": "0.200", "ratio_to_native": "1.000"},
            {"workload": "w", "mode": "timing", "wall_s": "0.300", "ratio_to_native": "1.500"}])

    def test_a_run_past_its_time_limit_is_stopped_with_the_application_ncu_started(self):
        # ncu starts the application as its child: stopping ncu alone left the application running
        # (and holding the GPU) after the benchmark. The second application also ignores SIGTERM:
        # SIGKILL follows after --kill-grace.
        for stubborn in (False, True):
            with self.subTest(ignores_sigterm=stubborn):
                pids = os.path.join(self.tmp, f"pids-{stubborn}")
                app = self.script("app.py", f"""
                    import os, signal, time
                    if os.environ.get("UNDER_NCU"):
                        if {stubborn}:
                            signal.signal(signal.SIGTERM, signal.SIG_IGN)
                        with open({pids!r}, "a") as f:
                            f.write(f"{{os.getpid()}}\\n")
                        time.sleep(120)
                    """)
                ncu = self.script("ncu-child", """
                    import os, subprocess, sys
                    args = sys.argv[1:]
                    sys.exit(subprocess.call(args[args.index("-o") + 2:], env=dict(os.environ, UNDER_NCU="1")))
                    """)
                out = os.path.join(self.tmp, f"results-{stubborn}")
                extra = ["--kill-grace", "1"] if stubborn else []
                started = time.monotonic()
                try:
                    p = subprocess.run([sys.executable, OVERHEAD, "--out", out, "--inject", self.inject, "--ncu", ncu,
                                        "--workload", f"app={app}", "--workloads", "app", "--modes", "native,ncu",
                                        "--timeout", "3", *extra], capture_output=True, text=True, timeout=120)
                    took = time.monotonic() - started
                    pid = pids_in(pids)[0]
                    self.assertFalse(running(pid), "the application under ncu outlived its run's time limit")
                finally:
                    for pid in pids_in(pids):
                        kill_if_running(pid)
                self.assertLess(took, 60)  # bounded: 3 s, the grace, then SIGKILL
                self.assertEqual(p.returncode, 0, p.stderr)
                ncu_run = [r for r in self.read_csv(out, "runs.csv") if r["mode"] == "ncu"]
                self.assertEqual(ncu_run[0]["exit_status"], "timeout")

    def test_failed_and_timed_out_modes_say_how_they_ended_and_stay_out_of_overhead_csv(self):
        work = self.script("ends.py", """
            import os, sys, time
            mode = os.environ.get("RFPROF_MODE")
            if mode == "timing":
                time.sleep(60)
            elif mode == "counters":
                print("roofline: gave up")
                sys.exit(4)
            """)
        p, out = self.run_overhead("--workload", f"ends={work}", "--workloads", "ends", "--modes",
                                   "native,timing,roofline", "--timeout", "1.5")
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = {r["mode"]: r for r in self.read_csv(out, "runs.csv") if r["repeat"] != "warmup"}
        self.assertEqual(runs["timing"]["exit_status"], "timeout")
        self.assertGreaterEqual(float(runs["timing"]["wall_s"]), 1.5)  # how long it ran: a lower bound
        self.assertEqual(runs["roofline"]["exit_status"], "4")
        # overhead.csv's wall_s stays a number: neither row is there.
        self.assertEqual([r["mode"] for r in self.read_csv(out, "overhead.csv")], ["native"])
        readme = self.readme(out)
        self.assertRegex(readme, r"\| ends \| timing \| >= 1\.[5-9][0-9]* \| >= [0-9.]+ \| 0 of 1 \| "
                                 r"not in overhead.csv: "
                                 r"stopped at its time limit after >= 1\.[5-9][0-9]* s \|")
        self.assertRegex(readme, r"\| ends \| roofline \|  \|  \| 0 of 1 \| "
                                 r"not in overhead.csv: exited 4 after [0-9.]+ s \|")
        self.assertRegex(readme, r"- ends, timing: no run exited 0 \(last: stopped at its time limit after "
                                 r">= 1\.[5-9][0-9]* s\)")
        self.assertRegex(readme, r"- ends, roofline: no run exited 0 \(last: exited 4 after [0-9.]+ s; its last line: "
                                 r"roofline: gave up\)")

    def interrupt(self, signum, ignore_sigint=False):
        """overhead.py with native (quick) and timing (sleeps 120 s) runs, sent `signum` while
        timing runs: (exit status, out, the timing run's pid)."""
        pids = os.path.join(self.tmp, "pids")
        work = self.script("sleepy.py", f"""
            import os, time
            if os.environ.get("RFPROF_MODE") == "timing":
                with open({pids!r}, "a") as f:
                    f.write(f"{{os.getpid()}}\\n")
                time.sleep(120)
            """)
        out = os.path.join(self.tmp, "results")
        # A job started in the background by a shell without job control inherits SIGINT
        # ignored, which `timeout --signal=INT` then could not undo.
        pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
        p = subprocess.Popen([sys.executable, OVERHEAD, "--out", out, "--inject", self.inject, "--ncu", self.ncu,
                              "--workload", f"sleepy={work}", "--workloads", "sleepy", "--modes", "native,timing,ncu"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=pre)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        deadline = time.monotonic() + 60
        while not os.path.exists(pids) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        time.sleep(0.2)
        pid = pids_in(pids)[0]
        self.addCleanup(kill_if_running, pid)
        # Written after each run, before the benchmark ends: native's row is already there.
        self.assertEqual([r["mode"] for r in self.read_csv(out, "overhead.csv")], ["native"])
        self.assertEqual([(r["mode"], r["repeat"]) for r in self.read_csv(out, "runs.csv")],
                         [("native", "warmup"), ("native", "0")])
        p.send_signal(signum)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.fail(f"overhead.py still ran 30 s after {signal.Signals(signum).name}")
        self.assertFalse(running(pid), "the run in progress outlived the interrupt")
        return p.returncode, out

    def test_an_interrupt_keeps_the_finished_runs_and_stops_the_one_in_progress(self):
        for signum, ignored in ((signal.SIGTERM, False), (signal.SIGINT, True)):
            with self.subTest(signal=signum.name):
                shutil.rmtree(os.path.join(self.tmp, "results"), ignore_errors=True)
                if os.path.exists(os.path.join(self.tmp, "pids")):
                    os.remove(os.path.join(self.tmp, "pids"))
                rc, out = self.interrupt(signum, ignored)
                self.assertEqual(rc, 128 + signum)
                self.assertEqual([r["mode"] for r in self.read_csv(out, "overhead.csv")], ["native"])
                runs = self.read_csv(out, "runs.csv")
                self.assertEqual([(r["mode"], r["exit_status"]) for r in runs],
                                 [("native", "0"), ("native", "0"), ("timing", "interrupted")])
                readme = self.readme(out)
                self.assertIn(f"**Interrupted by {signum.name}** after 3 run(s)", readme)
                self.assertIn(f"- sleepy, ncu: not run: interrupted by {signum.name}", readme)
                self.assertRegex(readme, r"\| sleepy \| timing \| >= [0-9.]+ \| >= [0-9.]+ \| 0 of 1 \| "
                                         r"not in overhead.csv: "
                                         r"interrupted after >= [0-9.]+ s \|")
                self.assertEqual(os.listdir(out).count("README.md.tmp"), 0)

    def test_an_earlier_invocations_analysis_is_not_read_as_this_runs(self):
        # An analysis/ folder left in the same --out by an earlier invocation, with counters, and a
        # roofline run that writes no trace: it has no counters to show, and none is read.
        stale = os.path.join(self.tmp, "results", "analysis", "fake-roofline")
        os.makedirs(stale)
        with open(os.path.join(stale, "summary.json"), "w") as f:
            json.dump({"traces": [{"launches": 387, "mode": "counters", "join": {"rows_without_counters": 0}}],
                       "collector_errors": []}, f)
        with open(os.path.join(stale, "trace.json"), "w") as f:
            json.dump({"traceEvents": [{"ph": "X", "cat": "cuda_api", "ts": 1.0, "dur": 5.0}]}, f)
        rfanalyze = self.script("rfanalyze", FAKE_RFANALYZE)
        p, out = self.run_overhead("--modes", "native,roofline", "--rfanalyze", rfanalyze)
        self.assertEqual(p.returncode, 0, p.stderr)
        readme = self.readme(out)
        self.assertNotIn("counters for 387", readme)
        self.assertRegex(readme, r"\| fake \| roofline \| [0-9.]+ \| [0-9.]+ \| 1 \| counters not checked: its last run "
                                 r"wrote no trace \(traces/fake-roofline.rftrace\) \|")
        self.assertNotIn("Launch calls", readme)
        self.assertFalse(os.path.exists(stale))

    def test_version_queries_are_bounded_and_counted_in_the_budget(self):
        # An ncu whose --version hangs held the benchmark 60 s before its --budget clock started.
        ncu = self.script("ncu-hangs", f"""
            import os, sys, time
            if "--version" in sys.argv:
                time.sleep(100)
            os.execv({self.ncu!r}, [{self.ncu!r}] + sys.argv[1:])
            """)
        started = time.monotonic()
        p = subprocess.run([sys.executable, OVERHEAD, "--out", os.path.join(self.tmp, "results"), "--inject",
                            self.inject, "--ncu", ncu, "--workload", f"fake={self.workload}", "--workloads", "fake",
                            "--modes", "native,timing", "--warmup-runs", "0", "--budget", "8", "--min-run", "7"],
                           capture_output=True, text=True, timeout=300)
        took = time.monotonic() - started
        self.assertLess(took, 30, p.stderr)
        readme = self.readme(os.path.join(self.tmp, "results"))
        self.assertIn("- ncu: (not available: no answer in 2 s)", readme)  # a quarter of the budget
        # The 2 s the queries took leave less than --min-run: nothing is started.
        self.assertIn("- fake, native: not run: the --budget of 8 s was used up", readme)
        self.assertEqual(p.returncode, 1)

    def test_the_readme_is_written_a_section_at_a_time_and_gpu_validate_calls_overhead_py_once(self):
        overhead = import_overhead()
        args = type("Args", (), {"repeat_modes": ["native"], "warmup_runs": 0, "repeats": 1})()
        bench = overhead.Bench(self.tmp, [], args, ["resnet18"], ["native", "timing"], [], [], {"ncu": "1.0"})
        self.assertEqual(bench.steps_table({}), "")
        self.assertEqual(bench.costs_table(), "")
        self.assertEqual(bench.calls_table(), "")
        self.assertIn("- ncu: 1.0", bench.readme_head())
        text = bench.budget_table([], {}, {}, {("resnet18", "native"): "not run: interrupted by SIGINT"})
        self.assertIn("| resnet18 | native | every check (native is the reference) |  | not measured: the budget "
                      "cannot be judged without native: not run: interrupted by SIGINT |  |  | not measured |", text)
        self.assertEqual(bench.not_measured_list({("resnet18", "timing"): "not run: x"}),
                         "\n## Not measured\n\n- resnet18, timing: not run: x\n")
        # A "|" in a log's last line does not split a table row.
        self.assertEqual(overhead.table_row(["a", "x | y"]), "| a | x \\| y |\n")
        # scripts/gpu-validate: one function builds the overhead.py call for first15 and overhead.
        with open(os.path.join(ROOT, "scripts", "gpu-validate")) as f:
            script = f.read()
        self.assertEqual(script.count("bench/overhead.py --build"), 1)
        for step in ("step_first15() {", "step_overhead() {"):
            body = script[script.index(step):]
            self.assertIn("overhead_py ", body[:body.index("\n}\n")], step)


if __name__ == "__main__":
    unittest.main()
