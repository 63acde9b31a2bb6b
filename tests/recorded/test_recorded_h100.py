"""rfanalyze on what rfprof and ncu recorded on an H100 (tests/data/h100-2026-11-23/README.md).

Every check compares rfprof with an independent count of the same run: ncu's raw CSV, the
examples' analytic counts, 2*n^3 for cuBLAS GEMMs, or PyTorch's FlopCounterMode.
RFANALYZE and RFPROF name the rfanalyze and rfprof executables.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "h100-2026-11-23")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_flops  # noqa: E402
import compare  # noqa: E402

EXAMPLES = ["dfma", "fadd_fmul", "ffma", "hfma2", "sgemm_naive", "stream_copy"]
SASS = compare.SASS_PREFIX
# The traces of 2026-11-23 predate the collector asking the driver for the memory clock and bus
# width: their device records hold 0 for both, which rfprof prints as empty cells, not as 0.
UNKNOWN_IN_THESE_TRACES = ["device__attribute_global_memory_bus_width", "device__attribute_memory_clock_rate"]


def rfanalyze(args, out):
    run = subprocess.run([os.environ["RFANALYZE"]] + args + ["-o", out], capture_output=True,
                         text=True, timeout=240)
    if run.returncode != 0:
        raise AssertionError(f"rfanalyze {args} exited {run.returncode}: {run.stderr}")
    return out


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class RecordedH100(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def analysis(self, name, *traces):
        out = os.path.join(self.out, name)
        if not os.path.isdir(out):
            rfanalyze(list(traces), out)
        return out

    def test_examples_match_ncu_and_their_analytic_counts(self):
        for ex in EXAMPLES:
            with self.subTest(example=ex):
                out = self.analysis(ex, os.path.join(DATA, "examples", ex + ".rftrace"))
                rf = compare.read_rfprof_counters(os.path.join(out, "counters.csv"))
                nc = compare.read_ncu_raw(os.path.join(DATA, "examples", ex + ".ncu.csv"))
                cmp_rows, problems = compare.compare_workload(ex, rf, nc)
                self.assertEqual(problems, [])
                self.assertEqual(len(rf), 1)
                sass = [r for r in cmp_rows if r[3].startswith(SASS)]
                self.assertEqual(len(sass), 9)
                self.assertTrue(all(r[4] == r[5] for r in sass), sass)
                with open(os.path.join(DATA, "examples", ex + ".expected.json")) as f:
                    expected = json.load(f)
                flops = compare.read_rfprof_flops(os.path.join(out, "kernels.csv"))
                _, problems = compare.check_expected(ex, expected, rf, flops, nc)
                self.assertEqual(problems, [])

    def test_counters_mode_durations_come_from_gpu_time_duration(self):
        out = self.analysis("ffma", os.path.join(DATA, "examples", "ffma.rftrace"))
        k = rows(os.path.join(out, "kernels.csv"))[0]
        c = {r["metric"]: float(r["value"]) for r in rows(os.path.join(out, "counters.csv"))}
        self.assertEqual(int(k["duration_ns"]), round(c["gpu__time_duration.sum"]))
        self.assertGreater(float(k["flop_per_s"]), 0)

    def test_resnet18_step_matches_ncu_launch_by_launch(self):
        out = self.analysis("resnet18", os.path.join(DATA, "resnet18", "resnet18.rftrace"))
        rf = compare.read_rfprof_counters(os.path.join(out, "counters.csv"))
        nc = compare.read_ncu_raw(os.path.join(DATA, "resnet18", "resnet18.ncu.csv"))
        self.assertEqual(len(rf), 387)
        self.assertEqual(len(nc), 387)
        cmp_rows, problems = compare.compare_workload("resnet18", rf, nc)
        self.assertEqual(problems, [])
        sass = [r for r in cmp_rows if r[3].startswith(SASS)]
        self.assertEqual(len(sass), 387 * 9)
        phases = {r["phase"]: r for r in rows(os.path.join(out, "phases.csv"))}
        self.assertEqual(set(phases), {"forward", "backward", "optimizer"})
        # Kernel replay: CUPTI gave no kernel record time stamps, so every duration is the
        # counter's, measured during a pass, and summary.json says so.
        with open(os.path.join(out, "summary.json")) as f:
            join = json.load(f)["traces"][0]["join"]
        self.assertEqual(join["durations_from_gpu_time_duration"], 387)

    def test_metric_configs_give_the_passes_the_range_profiler_needed(self):
        # What CUPTI's Range Profiler reported on the H100 for each trace's metrics: the roofline
        # set (14 metrics) in 2 passes, as the host API plans it offline (DESIGN.md), and the set
        # with every tensor precision (35 metrics, gemm.rftrace) in 7.
        for name, trace, want in [
                ("resnet18", os.path.join(DATA, "resnet18", "resnet18.rftrace"), (14, 2)),
                ("gemm", os.path.join(DATA, "gemm", "gemm.rftrace"), (35, 7))]:
            out = self.analysis(name, trace)
            with open(os.path.join(out, "summary.json")) as f:
                configs = json.load(f)["traces"][0]["metric_configs"]
            self.assertEqual(configs, [{"config_id": 1, "metrics": want[0], "passes": want[1]}], name)

    def test_kernel_names_with_ncus_name_bases(self):
        # ncu 2025.3 demangles in its own style ("const float *", "T1", "<unnamed>", namespaces
        # left out), so full names differ; the function names (--print-kernel-base function) are
        # ncu's own for all 387 launches, in ncu's launch order (the autograd thread's launches
        # reach the trace later than the main thread's), and every C++ symbol is demangled (two of
        # cuDNN's CUTLASS kernels only by the analyzer's LLVM fallback).
        def kernel_names(text):
            table = list(csv.reader(ln for ln in text.splitlines() if ln.startswith('"')))
            col = table[0].index("Kernel Name")
            return [r[col] for r in table[1:] if r and r[0].isdigit()]

        def function_name(ncu_name):  # ncu's demangled name without return type, templates, params
            out, depth = "", 0
            for c in ncu_name:
                if c == "<":
                    depth += 1
                elif c == ">":
                    depth = max(0, depth - 1)
                elif depth == 0:
                    if c == "(":
                        break
                    out = "" if c == " " else out + c
            return out.rsplit("::", 1)[-1]

        def printed(base):
            run = subprocess.run([os.environ["RFPROF"], "-i", os.path.join(DATA, "resnet18", "resnet18.rftrace"),
                                  "--csv", "--page", "raw", "--print-kernel-base", base],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            return kernel_names(run.stdout)

        with open(os.path.join(DATA, "resnet18", "resnet18.ncu.csv")) as f:
            theirs = kernel_names(f.read())
        functions = printed("function")
        self.assertEqual(len(functions), 387)
        self.assertEqual(functions, [function_name(n) for n in theirs])
        mangled = printed("mangled")
        self.assertEqual(len(mangled), 387)
        self.assertGreater(sum(m.startswith("_Z") for m in mangled), 300)
        demangled = printed("demangled")
        self.assertEqual([n for n in demangled if n.startswith("_Z")], [])
        # Row for row, as a script reading ncu's CSV sees them: the same launch in every row.
        run = subprocess.run([os.environ["RFPROF"], "-i", os.path.join(DATA, "resnet18", "resnet18.rftrace"),
                              "--csv", "--page", "raw"], capture_output=True, text=True, timeout=120)
        ours = [r for r in csv.reader(run.stdout.splitlines())]
        with open(os.path.join(DATA, "resnet18", "resnet18.ncu.csv"), newline="") as f:
            table = list(csv.reader(ln for ln in f if ln.startswith('"')))
        # ncu's launch and device attributes too (launch__grid_size, launch__registers_per_thread,
        # device__attribute_display_name, ...), and the columns in ncu's order: sorted by name.
        attributes = [c for c in ours[0] if c.startswith(("launch__", "device__attribute_"))]
        self.assertGreaterEqual(len(attributes), 27)
        self.assertEqual(ours[0][11:], sorted(ours[0][11:]))
        for column in UNKNOWN_IN_THESE_TRACES:
            self.assertEqual({r[ours[0].index(column)] for r in ours[2:]}, {""}, column)
        attributes = [c for c in attributes if c not in UNKNOWN_IN_THESE_TRACES]
        for column in ["ID", "Grid Size", "Block Size", "Stream", "Device", "CC"] + \
                [c for c in ours[0] if c.startswith(SASS)] + attributes:
            i, j = ours[0].index(column), table[0].index(column)
            self.assertEqual([r[i] for r in ours[2:]], [r[j] for r in table[2:] if r and r[0].isdigit()], column)
        self.assertEqual(sum(n.startswith("void cutlass__5x_cudnn::Kernel<") for n in demangled),
                         sum(m.startswith("_ZN17cutlass__5x_cudnn6Kernel") for m in mangled))

    def test_kernel_id_and_filter_mode_select_what_ncus_csv_says(self):
        # rfprof -i with ncu's --filter-mode per-launch-config -c 1 and --kernel-id prints the
        # launches an independent reading of ncu's own CSV of the same step selects: the first
        # launch of each (kernel, grid, block, dynamic shared memory), the second launch of each
        # kernel, the third launch of each kernel on the step's first stream.
        with open(os.path.join(DATA, "resnet18", "resnet18.ncu.csv"), newline="") as f:
            table = list(csv.reader(ln for ln in f if ln.startswith('"')))
        head, launches = table[0], [r for r in table[2:] if r and r[0].isdigit()]
        col = {c: head.index(c) for c in ["Kernel Name", "Grid Size", "Block Size", "Stream",
                                           "launch__shared_mem_per_block_dynamic"]}

        def config(r):
            return (r[col["Grid Size"]], r[col["Block Size"]])

        def selected(key, nth):
            seen, out = {}, []
            for r in launches:
                k = key(r)
                if k is None:
                    continue
                seen[k] = seen.get(k, 0) + 1
                if seen[k] == nth:
                    out.append(config(r))
            return out

        def printed(*flags):
            run = subprocess.run([os.environ["RFPROF"], "-i", os.path.join(DATA, "resnet18", "resnet18.rftrace"),
                                  "--csv", "--page", "raw", *flags], capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            ours = list(csv.reader(run.stdout.splitlines()))
            g, b = ours[0].index("Grid Size"), ours[0].index("Block Size")
            return [(r[g], r[b]) for r in ours[2:]]

        per_config = selected(lambda r: (r[col["Kernel Name"]], config(r),
                                         r[col["launch__shared_mem_per_block_dynamic"]]), 1)
        self.assertEqual(len(per_config), 116)
        self.assertEqual(printed("--filter-mode", "per-launch-config", "-c", "1"), per_config)
        second = selected(lambda r: r[col["Kernel Name"]], 2)
        self.assertEqual(len(second), 36)
        self.assertEqual(printed("--kernel-id", ":::2"), second)
        stream = launches[0][col["Stream"]]
        third = selected(lambda r: r[col["Kernel Name"]] if r[col["Stream"]] == stream else None, 3)
        self.assertGreater(len(third), 0)
        self.assertEqual(printed("--kernel-id", f":{stream}::3"), third)

    def test_compare_replay_finds_a_changed_count(self):
        # scripts/compare_replay.py (step replay against kernel replay on a GPU), on this real
        # step: equal to itself; one instruction count changed by 1 is found.
        out = self.analysis("resnet18", os.path.join(DATA, "resnet18", "resnet18.rftrace"))
        script = os.path.join(ROOT, "scripts", "compare_replay.py")
        same = subprocess.run([sys.executable, script, out, out], capture_output=True, text=True, timeout=120)
        self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
        self.assertIn("smsp__sass_* counts compared: 3483, equal: 3483", same.stdout)
        changed = os.path.join(self.out, "resnet18-changed")
        os.makedirs(changed, exist_ok=True)
        with open(os.path.join(out, "counters.csv"), newline="") as f:
            table = list(csv.reader(f))
        header = table[0]
        metric, value = header.index("metric"), header.index("value")
        row = next(r for r in table[1:] if r[metric].endswith("ffma_pred_on.sum") and float(r[value]) > 0)
        row[value] = str(int(float(row[value])) + 1)
        with open(os.path.join(changed, "counters.csv"), "w", newline="") as f:
            csv.writer(f).writerows(table)
        diff = subprocess.run([sys.executable, script, out, changed], capture_output=True, text=True, timeout=120)
        self.assertEqual(diff.returncode, 1, diff.stdout)
        self.assertIn("problems: 1", diff.stdout)

    def test_compare_replay_takes_the_ncu_report_of_the_step_as_reference(self):
        # The GPU run compares step replay with ncu's report of the same step instead of running
        # kernel replay too (scripts/gpu-validate first15): on this step, rfprof's kernel replay
        # and ncu's report give every instruction count equal, read through the ncu path.
        out = self.analysis("resnet18", os.path.join(DATA, "resnet18", "resnet18.rftrace"))
        script = os.path.join(ROOT, "scripts", "compare_replay.py")
        ncu = os.path.join(DATA, "resnet18", "resnet18.ncu.csv")
        same = subprocess.run([sys.executable, script, ncu, out], capture_output=True, text=True, timeout=120)
        self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
        self.assertIn("launches: ncu 387, step replay 387", same.stdout)
        self.assertIn("smsp__sass_* counts compared: 3483, equal: 3483", same.stdout)

    def test_ncu_import_of_the_same_step_gives_the_same_flop(self):
        trace_out = self.analysis("resnet18", os.path.join(DATA, "resnet18", "resnet18.rftrace"))
        ncu_out = os.path.join(self.out, "resnet18-ncu")
        rfanalyze(["--import-ncu", os.path.join(DATA, "resnet18", "resnet18.ncu.csv")], ncu_out)
        # kernels.csv is in join order; correlation ids, like ncu's IDs, follow launch order.
        a = sorted(rows(os.path.join(trace_out, "kernels.csv")), key=lambda r: int(r["id"]))
        b = sorted(rows(os.path.join(ncu_out, "kernels.csv")), key=lambda r: int(r["id"]))
        self.assertEqual(len(a), len(b))
        for col in ("fp32_flop", "fp16_flop", "fp64_flop"):
            self.assertEqual([float(x[col] or 0) for x in a], [float(x[col] or 0) for x in b], col)
        self.assertGreater(sum(float(x["fp32_flop"] or 0) for x in a), 8e9)

    def test_cublas_gemms_count_two_n_cubed_tensor_flop(self):
        out = self.analysis("gemm", os.path.join(DATA, "gemm", "gemm.rftrace"))
        kernels = rows(os.path.join(out, "kernels.csv"))
        tensor = [k for k in kernels if any(float(k[c] or 0) > 0 for c in check_flops.TENSOR)]
        self.assertEqual(len(tensor), 10)  # 2 runs of fp64, tf32, fp16, bf16, int8
        self.assertEqual(check_flops.gemm(os.path.join(out, "kernels.csv"), 2048, 1024), 0)
        seen = {c for k in tensor for c in check_flops.TENSOR if float(k[c] or 0) > 0}
        self.assertEqual(seen, {"tensor_fp64_flop", "tensor_tf32_flop", "tensor_fp16_flop",
                                "tensor_bf16_flop", "tensor_int8_ops"})

    def test_demo_trace_tensor_flop_against_flop_counter_mode(self):
        out = self.analysis("demo", os.path.join(ROOT, "examples", "traces", "resnet18-h100.rftrace"))
        with open(os.path.join(ROOT, "examples", "traces", "resnet18-h100.flop_count.json")) as f:
            fcm = json.load(f)
        phases = {r["phase"]: r for r in rows(os.path.join(out, "phases.csv"))}
        tensor = {p: sum(float(r[c] or 0) for c in check_flops.TENSOR) for p, r in phases.items()}
        # cuDNN's TF32 convolution kernels do 5% (forward) and 11% (backward) more tensor-core
        # math than the convolutions' nominal FLOP (measured on this run).
        self.assertGreaterEqual(tensor["forward"] / fcm["flop_forward"], 1.0)
        self.assertLess(tensor["forward"] / fcm["flop_forward"], 1.1)
        self.assertGreaterEqual(tensor["backward"] / fcm["flop_backward"], 1.0)
        self.assertLess(tensor["backward"] / fcm["flop_backward"], 1.2)
        self.assertEqual(tensor["optimizer"], 0)

    def test_two_processes_two_traces_merged(self):
        mp = os.path.join(DATA, "multiprocess")
        out = self.analysis("mp", os.path.join(mp, "all_parent.rftrace"), os.path.join(mp, "all_child.rftrace"))
        procs = rows(os.path.join(out, "processes.csv"))
        self.assertEqual(sorted(int(p["pid"]) for p in procs), [6897, 6914])
        self.assertTrue(all(int(p["launches"]) == 5 for p in procs))
        kernels = rows(os.path.join(out, "kernels.csv"))
        gemms = [k for k in kernels if k["pid"] == "6897" and "gemm" in k["kernel"]]
        # 1024^3 matmul in FP32 (FFMA): 2*M*N*K plus the 2*M*N of the epilogue.
        self.assertEqual([float(k["fp32_flop"]) for k in gemms], [2 * 1024 ** 3 + 2 * 1024 ** 2] * 3)
        with open(os.path.join(out, "summary.json")) as f:
            errors = json.load(f)["collector_errors"]
        self.assertEqual([(e["pid"], e["code_name"]) for e in errors], [(6914, "counters_unavailable")])

    def test_rfprof_csv_has_ncus_layout_units_and_values(self):
        # rfprof -i TRACE --csv --page raw against what ncu 2025.3 printed for the same kernel.
        for ex in EXAMPLES:
            with self.subTest(example=ex):
                run = subprocess.run([os.environ["RFPROF"], "-i", os.path.join(DATA, "examples", ex + ".rftrace"),
                                      "--csv", "--page", "raw"], capture_output=True, text=True, timeout=60)
                self.assertEqual(run.returncode, 0, run.stderr)
                ours = list(csv.reader(run.stdout.splitlines()))
                with open(os.path.join(DATA, "examples", ex + ".ncu.csv"), newline="") as f:
                    theirs = list(csv.reader(ln for ln in f if not ln.startswith("==")))
                self.assertEqual(ours[0][:11], theirs[0][:11])
                self.assertEqual(len(ours), 3)  # header, units, one launch
                col = {name: i for i, name in enumerate(theirs[0])}
                for i, name in enumerate(ours[0][11:], start=11):
                    j = col[name]
                    self.assertEqual(ours[1][i], theirs[1][j], name)  # unit
                    if name in UNKNOWN_IN_THESE_TRACES:
                        self.assertEqual(ours[2][i], "", name)  # 0 in the trace: unknown, not 0
                    elif name.startswith((SASS, "launch__", "device__attribute_")):
                        self.assertEqual(ours[2][i], theirs[2][j], name)  # "2,147,483,648"
                for c in ("Block Size", "Grid Size", "Device", "CC"):
                    self.assertEqual(ours[2][col[c]], theirs[2][col[c]], c)

    def test_traces_of_killed_runs_are_analyzable(self):
        # ResNet-18 with 8 DataLoader workers (--fake-data), SIGKILLed mid-run: the .part trace is
        # analyzed as far as it is readable, and rfanalyze says it is truncated.
        for name, launches in (("resnet18-timing-sigkill", 159), ("resnet18-counters-sigkill", 177)):
            with self.subTest(trace=name):
                out = os.path.join(self.out, name)
                run = subprocess.run([os.environ["RFANALYZE"], os.path.join(DATA, "kill", name + ".part.rftrace"),
                                      "-o", out], capture_output=True, text=True, timeout=120)
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertIn("is truncated at byte", run.stderr)
                with open(os.path.join(out, "summary.json")) as f:
                    t = json.load(f)["traces"][0]
                self.assertTrue(t["truncated"])
                self.assertEqual(t["launches"], launches)
                self.assertEqual(len(rows(os.path.join(out, "kernels.csv"))), launches)

    def test_timing_and_stack_traces(self):
        out = self.analysis("timing", os.path.join(DATA, "resnet18", "resnet18.timing.rftrace"))
        kernels = rows(os.path.join(out, "kernels.csv"))
        self.assertEqual(len(kernels), 387)
        self.assertTrue(all(int(k["duration_ns"]) > 0 for k in kernels))
        with open(os.path.join(out, "summary.json")) as f:  # timing mode: the kernel records' own
            self.assertEqual(json.load(f)["traces"][0]["join"]["durations_from_gpu_time_duration"], 0)
        out = self.analysis("stacks", os.path.join(DATA, "resnet18", "resnet18.stacks.rftrace"))
        sites = rows(os.path.join(out, "callsites.csv"))
        self.assertTrue(any("cudnn_batch_norm" in s.get("call_site", "") for s in sites),
                        [s.get("call_site") for s in sites][:10])
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        self.assertGreater(summary["traces"][0]["memory"]["peak_bytes"], 0)
        # Unknown in this trace (UNKNOWN_IN_THESE_TRACES): null, not 0; CUPTI's bandwidth is there.
        device = summary["devices"][0]
        self.assertEqual((device["memory_clock_khz"], device["memory_bus_width_bits"]), (None, None))
        self.assertEqual(device["reported_memory_bandwidth_bytes_per_s"], 2 * 2_619_000e3 * 5120 / 8)
        self.assertEqual(device["compute_capability"], "9.0")  # an H100: sm_90
        self.assertEqual(device["l2_cache_bytes"], 50 * 1024 * 1024)  # the H100 SXM5's 50 MiB L2
        self.assertEqual(device["global_memory_bytes"], 85_017_493_504)  # as the driver reported it (79.18 GiB)
        self.assertTrue(device["trace"].endswith("resnet18.stacks.rftrace"), device["trace"])
        self.assertIsNone(summary["traces"][0]["truncated_at_byte"])  # finished, so no byte to name
        self.assertEqual(summary["totals"]["tensor"], {})  # timing mode: no tensor term to list


if __name__ == "__main__":
    unittest.main()
