"""Tests of the validation helpers that need no GPU: tests/examples/check_expected.py (the GPU
test harness, here with stand-ins for the example, librfinject and rfanalyze),
scripts/validation_report.py, and scripts/default-metrics.txt against the collector's defaults."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
import contextlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)
import check_expected  # noqa: E402
import compare_replay  # noqa: E402
import kill_bound  # noqa: E402
import validation_report  # noqa: E402

DATA = os.path.join(HERE, "data", "val")


class CheckExpectedTest(unittest.TestCase):
    """The example stand-in prints the fixture's RFPROF_EXPECTED line and checks it was started
    with librfinject; the rfanalyze stand-in copies the fixture's analysis into -o DIR."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        with open(os.path.join(DATA, "expected", "ffma.json")) as f:
            self.expected = f.read().strip()
        self.analysis = os.path.join(self.tmp, "fixture_analysis")
        shutil.copytree(os.path.join(DATA, "analysis", "ffma"), self.analysis)
        self.example = self.script("ffma", f"""
            import os, sys
            assert os.environ["CUDA_INJECTION64_PATH"] == os.environ["NVTX_INJECTION64_PATH"]
            open(os.environ["RFPROF_OUTPUT"], "w").write("trace")
            print("ffma: result check passed")
            print("RFPROF_EXPECTED " + {self.expected!r})
            """)
        self.rfanalyze = self.script("rfanalyze", f"""
            import shutil, sys
            trace, out = sys.argv[1], sys.argv[sys.argv.index("-o") + 1]
            assert open(trace).read() == "trace"
            shutil.copytree({self.analysis!r}, out, dirs_exist_ok=True)
            """)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def script(self, name, body):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(f"#!{sys.executable}\n" + textwrap.dedent(body))
        os.chmod(path, 0o755)
        return path

    def run_check(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = check_expected.main(["--example", self.example, "--inject", "/x/librfinject.so",
                                      "--rfanalyze", self.rfanalyze,
                                      "--workdir", os.path.join(self.tmp, "work")])
        return rc, err.getvalue()

    def test_counts_met(self):
        self.assertEqual(self.run_check(), (0, ""))

    def test_count_not_met_fails(self):
        path = os.path.join(self.analysis, "counters.csv")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("ffma_pred_on.sum,2147483648", "ffma_pred_on.sum,2147483000"))
        rc, err = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("rfprof 2147483000, expected 2147483648", err)

    def test_example_failure_is_reported(self):
        self.example = self.script("ffma", "import sys; sys.exit(3)")
        rc, err = self.run_check()
        self.assertEqual(rc, 2)
        self.assertIn("exited with 3 under librfinject", err)


class ReportTest(unittest.TestCase):
    def test_overhead_ratios_and_report(self):
        tmp = tempfile.mkdtemp()
        try:
            with open(os.path.join(tmp, "times.csv"), "w") as f:
                f.write("resnet18,native,20.000,0\nresnet18,rfprof-counters,31.000,0\n"
                        "resnet18,ncu,,skipped\nresnet18,rfprof-timing,9.0,1\n"
                        "resnet18,rfprof-timing,22.5,0\n")
            with open(os.path.join(tmp, "facts.txt"), "w") as f:
                f.write("gpu: NVIDIA H100 80GB HBM3\ndriver: 580.65\nncu settings: "
                        "--cache-control all --clock-control base\n")
            run = os.path.join(tmp, "analysis", "dfma")
            os.makedirs(run)
            with open(os.path.join(run, "profiler_overhead.csv"), "w") as f:
                f.write("trace,pid,phase,count,total_ns,mean_ns,max_ns,share_of_traced_time\n"
                        "t,1,counters.enable,1,40000000,40000000,40000000,0.0125\n"
                        "t,1,launch.counters,1,2300000000,2300000000,2300000000,0.71875\n")
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(validation_report.main([tmp]), 0)
            with open(os.path.join(tmp, "overhead.csv")) as f:
                rows = list(csv.reader(f))
            self.assertEqual(rows, [["workload", "mode", "wall_s", "ratio_to_native"],
                                    ["resnet18", "native", "20.000", "1.00"],
                                    ["resnet18", "rfprof-counters", "31.000", "1.55"],
                                    ["resnet18", "rfprof-timing", "22.500", "1.12"]])
            with open(os.path.join(tmp, "report.md")) as f:
                report = f.read()
            self.assertIn("# rfprof GPU validation: NVIDIA H100 80GB HBM3", report)
            self.assertIn("resnet18 ncu (skipped)", report)
            self.assertIn("| resnet18 | rfprof-counters | 31.000 | 1.55 |", report)
            # The collector's own cost, costliest phase first.
            cost = report[report.index("## 5."):]
            self.assertIn("| analysis/dfma | launch.counters | 1 | 2.300 | 2300.000 | 2300.000 | 71.9% |",
                          cost)
            self.assertLess(cost.index("launch.counters"), cost.index("counters.enable"))
        finally:
            shutil.rmtree(tmp)

    def test_bench_overhead_table_when_nothing_was_timed(self):
        # gpu-validate's first15 times nothing itself: bench/overhead.py's table and analyses are
        # the report's (until 2026-11-29 report.md said "no runs recorded" beside them).
        tmp = tempfile.mkdtemp()
        try:
            os.makedirs(os.path.join(tmp, "bench", "analysis", "resnet18-timing"))
            with open(os.path.join(tmp, "bench", "overhead.csv"), "w") as f:
                f.write("workload,mode,wall_s,ratio_to_native\nresnet18,native,13.100,1.00\n"
                        "resnet18,timing,12.000,0.92\n")
            with open(os.path.join(tmp, "bench", "analysis", "resnet18-timing", "profiler_overhead.csv"), "w") as f:
                f.write("trace,pid,phase,count,total_ns,mean_ns,max_ns,share_of_traced_time\n"
                        "t,1,launch.callbacks,100,5000000,50000,90000,0.001\n")
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(validation_report.main([tmp]), 0)
            with open(os.path.join(tmp, "overhead.csv")) as f:
                rows = list(csv.reader(f))
            self.assertEqual(rows[1:], [["resnet18", "native", "13.100", "1.00"],
                                        ["resnet18", "timing", "12.000", "0.92"]])
            with open(os.path.join(tmp, "report.md")) as f:
                report = f.read()
            self.assertIn("| resnet18 | timing | 12.000 | 0.92 |", report)
            self.assertNotIn("no runs recorded", report)
            self.assertIn("| bench/analysis/resnet18-timing | launch.callbacks | 100 |", report)
        finally:
            shutil.rmtree(tmp)

    def test_not_a_folder(self):
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(validation_report.main(["/nonexistent/folder"]), 2)


class DefaultMetricsTest(unittest.TestCase):
    def test_same_as_collector_defaults(self):
        with open(os.path.join(ROOT, "scripts", "default-metrics.txt")) as f:
            listed = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
        source = os.path.join(ROOT, "collector", "src", "host_metrics.cpp")
        if not os.path.exists(source):
            self.skipTest("collector/src/host_metrics.cpp is not in this tree")
        with open(source) as f:
            text = f.read()
        body = re.search(r"default_metrics\(\)\s*\{(.*?)\};", text, re.S)
        self.assertIsNotNone(body, "default_metrics() not found in host_metrics.cpp")
        self.assertEqual(listed, re.findall(r'"([a-z0-9_]+__[a-z0-9_.]+)"', body.group(1)))


class GpuValidateTest(unittest.TestCase):
    def test_usage_errors(self):
        script = os.path.join(ROOT, "scripts", "gpu-validate")
        for args in ([], ["bogus", tempfile.gettempdir()]):
            run = subprocess.run(["bash", script, *args], capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(run.returncode, 2, args)
            self.assertIn("usage: scripts/gpu-validate", run.stderr)

    def test_step_replay_durations_from_gpu_time_are_logged_by_cause(self):
        # stepreplay and first15 log how many step-replay launches took a pass's
        # gpu__time_duration: kernel records without time stamps (a CUPTI finding when not 0) apart
        # from rows with no kernel record at all (a .part cut before its activity buffer).
        with open(os.path.join(ROOT, "scripts", "gpu-validate")) as f:
            script = f.read()
        func = script[script.index("gpu_time_durations() {"):]
        func = func[:func.index("\n}\n") + 3]
        self.assertEqual(script.count("$(gpu_time_durations "), 2)
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        summary = os.path.join(tmp, "summary.json")
        with open(summary, "w") as f:
            json.dump({"traces": [{"launches": 9, "join": {"durations_from_gpu_time_duration": 0,
                                                           "durations_from_gpu_time_without_kernel_record": 3}}]}, f)
        run = subprocess.run(["bash", "-c", func + 'gpu_time_durations "$1"', "bash", summary],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(run.stdout, "0 of 9 from kernel records without time stamps, 3 without a kernel record\n",
                         run.stderr)

    def test_pack_on_fixture(self):
        tmp = tempfile.mkdtemp()
        try:
            out = os.path.join(tmp, "val")
            shutil.copytree(DATA, out)
            run = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-validate"), "pack",
                                  out], capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn("compare: exit status 0 (problems: 0)", run.stdout)
            listing = subprocess.run(["tar", "tzf", os.path.join(out, "bundle.tar.gz")],
                                     capture_output=True, text=True, check=True).stdout.split()
            for name in ("compare.csv", "expected.csv", "report.md", "overhead.csv", "env.txt",
                         "ncu/ffma.csv", "analysis/ffma/counters.csv"):
                self.assertIn(name, listing)
        finally:
            shutil.rmtree(tmp)


class KillBoundTest(unittest.TestCase):
    START = 1_795_396_290_556_024_608  # the H100 kill trace's ProcessInfo start (Unix epoch ns)

    def summary(self, last, truncated=True):
        return {"traces": [{"start_ns": self.START, "last_event_ns": last, "truncated": truncated}]}

    def test_an_event_within_the_flush_interval_shows_the_bound(self):
        kill = self.START + 2_540_000_000
        shown, line = kill_bound.gap_line(self.summary(self.START + 2_006_016_000), kill, 1000)
        self.assertTrue(shown)
        self.assertEqual(line, "last recorded event 534.0 ms before the kill (truncated trace): every record "
                               "older than 1000 ms was kept")

    def test_a_longer_gap_does_not_show_it(self):
        shown, line = kill_bound.gap_line(self.summary(self.START + 1_000_000_000),
                                          self.START + 2_500_000_001, 1000)
        self.assertFalse(shown)
        self.assertIn("1500.0 ms before the kill", line)
        self.assertIn("the bound is not shown", line)
        self.assertTrue(kill_bound.gap_line(self.summary(self.START + 1_000_000_000),
                                            self.START + 2_500_000_001, 2000)[0])  # --flush-ms 2000

    def test_bad_input_is_refused(self):
        with self.assertRaisesRegex(ValueError, "records no event"):
            kill_bound.gap_line(self.summary(None), self.START + 1, 1000)
        with self.assertRaisesRegex(ValueError, "not the same clock"):
            kill_bound.gap_line(self.summary(self.START + 5), 12345, 1000)  # e.g. a monotonic clock
        with self.assertRaisesRegex(ValueError, "one trace, found 0"):
            kill_bound.gap_line({"traces": []}, self.START, 1000)

    def test_command_line(self):
        tmp = tempfile.mkdtemp()
        try:
            path = os.path.join(tmp, "summary.json")
            with open(path, "w") as f:
                json.dump(self.summary(self.START + 100), f)
            script = os.path.join(ROOT, "scripts", "kill_bound.py")
            ok = subprocess.run([sys.executable, script, path, str(self.START + 200_000_100)],
                                capture_output=True, text=True)
            self.assertEqual(ok.returncode, 0, ok.stderr)
            self.assertIn("200.0 ms before the kill", ok.stdout)
            late = subprocess.run([sys.executable, script, path, str(self.START + 3_000_000_100)],
                                  capture_output=True, text=True)
            self.assertEqual(late.returncode, 1)
            bad = subprocess.run([sys.executable, script, os.path.join(tmp, "missing.json"), "1"],
                                 capture_output=True, text=True)
            self.assertEqual(bad.returncode, 2)
            self.assertIn("kill_bound: ", bad.stderr)
        finally:
            shutil.rmtree(tmp)



class CompareReplayTest(unittest.TestCase):
    """scripts/compare_replay.py: the step-replay analysis against the kernel-replay one, launch by
    launch (gpu-validate stepreplay)."""

    FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
    DRAM = "dram__bytes_read.sum"

    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def analysis(self, name, launches, windows=None):
        """An rfanalyze folder whose counters.csv has `launches`: (id, kernel, fadd, dram bytes);
        with `windows` (one (pid, window) per launch) the pid and window columns of today's
        rfanalyze, else the four columns of an older one."""
        folder = os.path.join(self.tmp, name)
        os.makedirs(folder)
        with open(os.path.join(folder, "counters.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "kernel", "metric", "value"] + (["pid", "window"] if windows else []))
            for i, (lid, kernel, fadd, dram) in enumerate(launches):
                tail = list(windows[i]) if windows else []
                w.writerow([lid, kernel, self.FADD, fadd] + tail)
                w.writerow([lid, kernel, self.DRAM, dram] + tail)
        return folder

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = compare_replay.main(list(args))
        return rc, out.getvalue(), err.getvalue()

    STEP = [(10, "void gemm(float*)", 4096, 100), (11, "relu(float*)", 0, 50), (12, "loss", 7, 9)]

    def test_equal_counts_pass_whatever_the_ids_and_bytes(self):
        # Other correlation ids (another run) and other DRAM bytes (the caches' state differs
        # between steps): only the instruction counts must be equal.
        kernel = self.analysis("kernel", [(3, "void gemm(float*)", 4096, 120), (5, "relu(float*)", 0, 40),
                                          (9, "loss", 7, 9)])
        rc, out, _ = self.run_main(kernel, self.analysis("step", self.STEP))
        self.assertEqual(rc, 0, out)
        self.assertIn("launches: kernel replay 3, step replay 3", out)
        self.assertIn("smsp__sass_* counts compared: 3, equal: 3", out)
        self.assertIn("problems: 0", out)

    def test_a_different_count_or_a_missing_launch_is_a_problem_naming_both_modes(self):
        kernel = self.analysis("kernel", [(3, "void gemm(float*)", 4095, 100), (9, "loss", 7, 9)])
        rc, out, _ = self.run_main(kernel, self.analysis("step", self.STEP))
        self.assertEqual(rc, 1, out)
        self.assertIn("problems: 2", out)
        self.assertIn(f"launch 0 gemm: {self.FADD}: step replay 4096 != kernel replay 4095", out)
        self.assertIn("(relu, step replay id 11) is in step replay only", out)

    def test_no_instruction_counts_is_a_failure(self):
        # Timing-mode traces (no counters): nothing compared is not a pass.
        empty = [(1, "loss", "", "")]
        rc, out, _ = self.run_main(self.analysis("kernel", empty), self.analysis("step", empty))
        self.assertEqual(rc, 1, out)
        self.assertIn("smsp__sass_* counts compared: 0", out)

    # Two groups (RFPROF_REPLAY_GROUPS=2): a timing window each, with other correlation ids; both
    # are the same step as the reference.
    GROUPS = [(12, "void gemm(float*)", 4096, 100), (13, "relu(float*)", 0, 50), (14, "loss", 7, 9),
              (27, "void gemm(float*)", 4096, 90), (28, "relu(float*)", 0, 50), (29, "loss", 7, 8)]
    GROUP_WINDOWS = [(101, 1)] * 3 + [(101, 2)] * 3

    def test_each_timing_window_is_compared_with_the_reference_on_its_own(self):
        kernel = self.analysis("kernel", [(3, "void gemm(float*)", 4096, 120), (5, "relu(float*)", 0, 40),
                                          (9, "loss", 7, 9)], [(7, 0)] * 3)
        rc, out, _ = self.run_main(kernel, self.analysis("step", self.GROUPS, self.GROUP_WINDOWS))
        self.assertEqual(rc, 0, out)
        self.assertIn("window 1: launches 3, smsp__sass_* counts compared: 3, equal: 3, problems: 0", out)
        self.assertIn("window 2: launches 3, smsp__sass_* counts compared: 3, equal: 3, problems: 0", out)
        self.assertIn("launches: kernel replay 3, step replay 6 in 2 timing window(s)", out)
        self.assertIn("smsp__sass_* counts compared: 6, equal: 6", out)
        # One count of the second group differs: that window fails, named; the first still passes.
        changed = list(self.GROUPS)
        changed[3] = (27, "void gemm(float*)", 4095, 90)
        rc, out, _ = self.run_main(kernel, self.analysis("step2", changed, self.GROUP_WINDOWS))
        self.assertEqual(rc, 1, out)
        self.assertIn("window 1: launches 3, smsp__sass_* counts compared: 3, equal: 3, problems: 0", out)
        self.assertIn("window 2: launches 3, smsp__sass_* counts compared: 3, equal: 2, problems: 1", out)
        self.assertIn(f"step-vs-kernel-replay window 2: launch 0 gemm: {self.FADD}: step replay 4095 != "
                      "kernel replay 4096", out)
        # Two processes (two traces analyzed together) reuse ids: each (pid, window) is a step.
        rc, out, _ = self.run_main(kernel, self.analysis("step3", self.GROUPS[:3] * 2,
                                                         [(101, 1)] * 3 + [(202, 1)] * 3))
        self.assertEqual(rc, 0, out)
        self.assertIn("window 1 (pid 202): launches 3", out)
        # A window without instruction counts is no pass.
        rc, out, _ = self.run_main(kernel, self.analysis("step4", self.GROUPS[:3] + [(30, "loss", "", "")],
                                                         [(101, 1)] * 3 + [(101, 2)]))
        self.assertEqual(rc, 1, out)
        self.assertIn("window 2: launches 1, smsp__sass_* counts compared: 0", out)

    def ncu_csv(self, launches):
        """An ncu --csv --page raw file: ==PROF== lines, the header, the units row, quoted numbers
        with thousands separators; `launches` as in analysis()."""
        path = os.path.join(self.tmp, "step.ncu.csv")
        with open(path, "w", newline="") as f:
            f.write("==PROF== Connected to process 1 (/usr/bin/python3)\n")
            w = csv.writer(f, quoting=csv.QUOTE_ALL)
            w.writerow(["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                        "Block Size", "Grid Size", "Device", "CC", self.DRAM, self.FADD])
            w.writerow([""] * 11 + ["Kbyte", "inst"])
            for lid, kernel, fadd, dram in launches:
                w.writerow([lid, 1, "python3", "h", kernel, 1, 7, "(256, 1, 1)", "(4, 1, 1)", 0, "9.0",
                            f"{dram / 1000:g}", f"{fadd:,}"])
            f.write("==PROF== Disconnected from process 1\n")
        return path

    def test_an_ncu_report_of_the_same_step_is_the_reference(self):
        # ncu's IDs count from 0, its counts carry thousands separators and its bytes a unit: only
        # the instruction counts are compared, under ncu's name.
        ncu = self.ncu_csv([(0, "gemm", 4096, 120), (1, "relu", 0, 40), (2, "loss", 7, 9)])
        rc, out, _ = self.run_main(ncu, self.analysis("step", self.STEP))
        self.assertEqual(rc, 0, out)
        self.assertIn("launches: ncu 3, step replay 3", out)
        self.assertIn("smsp__sass_* counts compared: 3, equal: 3", out)
        changed = self.ncu_csv([(0, "gemm", 4097, 120), (1, "relu", 0, 40), (2, "loss", 7, 9)])
        rc, out, _ = self.run_main(changed, self.analysis("step2", self.STEP))
        self.assertEqual(rc, 1, out)
        self.assertIn(f"launch 0 gemm: {self.FADD}: step replay 4096 != ncu 4097", out)
        # A file that is no ncu report is bad input, named.
        rc, _, err = self.run_main(os.path.join(self.analysis("step3", self.STEP), "counters.csv"),
                                   self.analysis("step4", self.STEP))
        self.assertEqual(rc, 2)
        self.assertIn('no header row starting with "ID"', err)

    def test_bad_input(self):
        rc, _, err = self.run_main(os.path.join(self.tmp, "missing"), os.path.join(self.tmp, "missing2"))
        self.assertEqual(rc, 2)
        self.assertIn("compare_replay: ", err)
        self.assertEqual(self.run_main("only-one")[0], 2)


class GpuFirst15Test(unittest.TestCase):
    """scripts/gpu-first15 with a stand-in for gpu-validate: what comes back in $OUT."""

    def run_first15(self, validate_body, limit="120"):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        fake = os.path.join(tmp, "fake-validate")
        with open(fake, "w") as f:
            f.write("#!/usr/bin/env bash\nset -u\nd=$2\nmkdir -p \"$d/bench\" \"$d/kill\"\n"
                    "echo \"budget $RFPROF_VALIDATE_BUDGET_S step $1\" > \"$d/steps.log\"\n" + validate_body)
        os.chmod(fake, 0o755)
        out, work = os.path.join(tmp, "out"), os.path.join(tmp, "v")
        os.makedirs(out)
        env = dict(os.environ, OUT=out, RFPROF_GPU_VALIDATE=fake)
        r = subprocess.run([os.path.join(ROOT, "scripts", "gpu-first15"), limit, work], env=env,
                           capture_output=True, text=True, timeout=60)
        return r, out

    def test_a_run_cut_short_still_brings_back_its_tables_and_an_emergency_bundle(self):
        r, out = self.run_first15(
            "printf 'workload,mode,wall_s,ratio_to_native\\nresnet18,native,13.1,1.00\\n' > \"$d/bench/overhead.csv\"\n"
            "echo killed-run > \"$d/kill/a.out\"\nexit 124\n")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertIn("packed no bundle (exit status 124)", r.stderr)
        with open(os.path.join(out, "steps.log")) as f:
            self.assertEqual(f.read(), "budget 75 step first15\n")  # LIMIT_S 120 - 45
        with open(os.path.join(out, "overhead.csv")) as f:
            self.assertIn("resnet18,native,13.1,1.00", f.read())
        listing = subprocess.run(["tar", "tzf", os.path.join(out, "bundle.tar.gz")], capture_output=True,
                                 text=True, check=True).stdout.split()
        self.assertIn("steps.log", listing)
        self.assertIn("bench/overhead.csv", listing)
        self.assertIn("kill/a.out", listing)
        self.assertLessEqual(len(os.listdir(out)), 8, os.listdir(out))

    def test_every_table_comes_back_within_eight_files(self):
        # Every table gpu-validate writes, ctest-gpu.log among them, and the bundle: the device
        # tool brings back at most 8 files from $OUT.
        r, out = self.run_first15(
            "echo f > \"$d/facts.txt\"; echo '100% tests passed' > \"$d/ctest-gpu.log\"\n"
            "for t in overhead steps costs; do echo $t > \"$d/bench/$t.csv\"; done\n"
            "echo readme > \"$d/bench/README.md\"\n(cd \"$d\" && tar czf bundle.tar.gz steps.log)\nexit 0\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(out)),
                         ["bench-README.md", "bundle.tar.gz", "costs.csv", "ctest-gpu.log", "facts.txt",
                          "overhead.csv", "steps.csv", "steps.log"])
        with open(os.path.join(out, "ctest-gpu.log")) as f:
            self.assertEqual(f.read(), "100% tests passed\n")

    def test_gpu_validates_own_bundle_is_the_one_brought_back(self):
        r, out = self.run_first15("echo own > \"$d/marker\"\n(cd \"$d\" && tar czf bundle.tar.gz marker)\nexit 0\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        listing = subprocess.run(["tar", "tzf", os.path.join(out, "bundle.tar.gz")], capture_output=True,
                                 text=True, check=True).stdout.split()
        self.assertEqual(listing, ["marker"])

    def test_bad_arguments(self):
        for limit in ("60", "601", "x"):
            r, _ = self.run_first15("exit 0\n", limit=limit)
            self.assertEqual(r.returncode, 2, limit)
            self.assertIn("usage: scripts/gpu-first15 LIMIT_S OUTDIR", r.stderr)


if __name__ == "__main__":
    unittest.main()
