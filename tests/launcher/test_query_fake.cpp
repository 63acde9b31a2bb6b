// This machine's CUDA devices without a GPU: collector::local_devices() (the driver through
// dlopen, the chips through CUPTI) and what rfprof builds on it, --query-metrics without --chips
// and the listings without --chip, on the fake driver (tests/collector/fake_libcuda.cpp) and the
// fake CUPTI (tests/collector/fake_cupti.h; the profiler host API stays libcupti's). On a GPU
// machine, InjectGpuQuery.QueryMetricsListsTheLocalDevices runs the same path on the real ones.
#include <dlfcn.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "fake_session.h"
#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/local_devices.h"
#include "rfprof/launcher/listings.h"
#include "rfprof/launcher/metric_query.h"

namespace rf::fake_cupti {
namespace {

using collector::LocalDevice;

/// Each test runs its body in a child (fake_session.h's run_child) that loads the fake driver, so
/// local_devices()'s dlopen("libcuda.so.1") finds it by its soname. Skipped where a real driver is
/// already loaded into the test process.
class FakeDriverQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (void* real = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
      ::dlclose(real);
      GTEST_SKIP() << "a libcuda.so.1 is already loaded in this process";
    }
  }
};

/// Loads the fake driver with `names` as its devices, or ends the child with status 4.
void with_devices(const std::vector<std::string>& names) {
  if (!load_fake_driver(RF_FAKE_LIBCUDA)) std::_Exit(4);
  set_driver_devices(names);
}

/// local_devices() in the child, printed one "ordinal|name|chip" line per device to stderr, or
/// "error: " and what it threw.
void print_local_devices() {
  try {
    for (const LocalDevice& d : collector::local_devices())
      std::fprintf(stderr, "%u|%s|%s\n", d.ordinal, d.name.c_str(), d.chip.c_str());
  } catch (const collector::HostApiError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  std::fprintf(stderr, "init %llu deinit %llu\n", static_cast<unsigned long long>(calls("cuptiProfilerInitialize")),
               static_cast<unsigned long long>(calls("cuptiProfilerDeInitialize")));
}

const char* kH100 = "NVIDIA H100 80GB HBM3";
const char* kA100 = "NVIDIA A100-SXM4-80GB";

TEST_F(FakeDriverQueryTest, EachDeviceHasItsOrdinalNameAndChip) {
  const Child c = run_child([] {
    with_devices({kH100, kA100, kH100});
    set_device_chip(1, "GA100");
    print_local_devices();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(c.err, std::string("0|") + kH100 + "|GH100\n1|" + kA100 + "|GA100\n2|" + kH100 +
                       "|GH100\ninit 1 deinit 1\n");
}

TEST_F(FakeDriverQueryTest, ADeviceNameLongerThanTheBufferIsCut) {
  const Child c = run_child([] {
    with_devices({std::string(300, 'x')});
    print_local_devices();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  // local_devices() gives the driver 255 bytes of its 256: 254 characters and the NUL.
  EXPECT_EQ(c.err, "0|" + std::string(254, 'x') + "|GH100\ninit 1 deinit 1\n");
}

TEST_F(FakeDriverQueryTest, NoDeviceIsAnEmptyListWithTheProfilerDeInitialized) {
  const Child c = run_child([] {
    with_devices({});
    print_local_devices();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(c.err, "init 1 deinit 1\n");
}

TEST_F(FakeDriverQueryTest, DriverFailuresAreNamedWithTheCallAndTheError) {
  const Child no_device = run_child([] {
    with_devices({kH100});
    fail_driver("cuInit", CUDA_ERROR_NO_DEVICE);
    print_local_devices();
  });
  ASSERT_TRUE(no_device.exited_zero()) << no_device.err;
  EXPECT_EQ(no_device.err,
            "error: rfprof: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA device is visible to this process)\n"
            "init 0 deinit 0\n");

  const Child name = run_child([] {
    with_devices({kH100, kA100});
    fail_driver("cuDeviceGetName", CUDA_ERROR_INVALID_DEVICE);
    print_local_devices();
  });
  ASSERT_TRUE(name.exited_zero()) << name.err;
  // The profiler initialized for the chip names is de-initialized on the way out.
  EXPECT_EQ(name.err, "error: rfprof: cuDeviceGetName failed: CUDA_ERROR_INVALID_DEVICE\ninit 1 deinit 1\n");

  const Child unknown = run_child([] {
    with_devices({kH100});
    fail_driver("cuDeviceGetCount", CUDA_ERROR_UNKNOWN);  // a result the fake has no name for
    print_local_devices();
  });
  ASSERT_TRUE(unknown.exited_zero()) << unknown.err;
  EXPECT_EQ(unknown.err, "error: rfprof: cuDeviceGetCount failed: unknown CUDA error\ninit 0 deinit 0\n");
}

TEST_F(FakeDriverQueryTest, CuptiFailuresAreNamedWithWhatCouldNotBeDone) {
  const Child init = run_child([] {
    with_devices({kH100});
    fail("cuptiProfilerInitialize", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    print_local_devices();
  });
  ASSERT_TRUE(init.exited_zero()) << init.err;
  EXPECT_EQ(init.err.rfind("error: rfprof: CUPTI's profiler cannot be initialized: cuptiProfilerInitialize failed: "
                           "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (local_devices.cpp:",
                           0),
            0u)
      << init.err;
  EXPECT_NE(init.err.find("\ninit 1 deinit 0\n"), std::string::npos) << init.err;

  const Child chip = run_child([] {
    with_devices({kH100});
    fail("cuptiDeviceGetChipName", CUPTI_ERROR_NOT_SUPPORTED);
    print_local_devices();
  });
  ASSERT_TRUE(chip.exited_zero()) << chip.err;
  EXPECT_EQ(chip.err.rfind("error: rfprof: CUPTI cannot name the device's chip: cuptiDeviceGetChipName failed: "
                            "CUPTI_ERROR_NOT_SUPPORTED (local_devices.cpp:",
                            0),
            0u)
      << chip.err;
  EXPECT_NE(chip.err.find("\ninit 1 deinit 1\n"), std::string::npos) << chip.err;
}

TEST_F(FakeDriverQueryTest, WithoutADriverTheLoaderSaysWhy) {
  const Child c = run_child([] {  // the fake driver not loaded
    if (::dlopen("libcuda.so.1", RTLD_LAZY)) {  // an installed driver: local_devices() would find it
      std::fprintf(stderr, "a driver is installed\n");
      return;
    }
    print_local_devices();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  if (c.err == "a driver is installed\n") GTEST_SKIP() << "a libcuda.so.1 is installed on this machine";
  EXPECT_EQ(c.err.rfind("error: rfprof: no CUDA driver could be loaded (", 0), 0u) << c.err;
  EXPECT_NE(c.err.find("libcuda.so.1"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("\ninit 0 deinit 0\n"), std::string::npos) << c.err;
}

/// run_metric_query / run_listing in the child: "rc N", then what they wrote to out and to err,
/// each after a marker line, on the child's stderr.
template <typename Run>
void print_run(Run run) {
  std::ostringstream out, err;
  const int rc = run(out, err);
  std::fprintf(stderr, "rc %d\n--out\n%s--err\n%s", rc, out.str().c_str(), err.str().c_str());
}

/// The part of a child's print_run output between `from` and `to` (empty `to`: its end).
std::string part(const std::string& s, const std::string& from, const std::string& to = "") {
  const size_t a = s.find(from);
  if (a == std::string::npos) return "(no " + from + ")";
  const size_t b = to.empty() ? std::string::npos : s.find(to, a + from.size());
  return s.substr(a + from.size(), b == std::string::npos ? std::string::npos : b - a - from.size());
}

TEST_F(FakeDriverQueryTest, QueryMetricsHostApiHasOneTablePerDeviceUnderItsName) {
  const Child c = run_child([] {
    with_devices({kH100, kA100});
    set_device_chip(1, "GA100");
    launcher::MetricQuery q;
    q.metrics = {"dram__bytes_read.sum"};
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_metric_query(q, o, e); });
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(c.err.rfind("rc 0\n", 0), 0u) << c.err;
  const std::string out = part(c.err, "--out\n", "--err\n");
  EXPECT_EQ(out.rfind(std::string("Device ") + kH100 + " (GH100)\n", 0), 0u) << out;
  const size_t second = out.find(std::string("\nDevice ") + kA100 + " (GA100)\n");
  ASSERT_NE(second, std::string::npos) << out;
  // Each table lists the metric: once under the H100, once under the A100.
  const size_t row1 = out.find("\ndram__bytes_read.sum ");
  ASSERT_NE(row1, std::string::npos) << out;
  EXPECT_LT(row1, second);
  EXPECT_NE(out.find("\ndram__bytes_read.sum ", second), std::string::npos) << out;
  EXPECT_EQ(part(c.err, "--err\n"), "");
}

TEST_F(FakeDriverQueryTest, QueryMetricsHostApiDevicesChooseTablesAndCsvHasAColumnPerChip) {
  const Child one = run_child([] {
    with_devices({kH100, kA100});
    set_device_chip(1, "GA100");
    launcher::MetricQuery q;
    q.metrics = {"dram__bytes_read.sum"};
    q.devices = {1};
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_metric_query(q, o, e); });
  });
  ASSERT_TRUE(one.exited_zero()) << one.err;
  const std::string out = part(one.err, "--out\n", "--err\n");
  EXPECT_EQ(out.rfind(std::string("Device ") + kA100 + " (GA100)\n", 0), 0u) << out;
  EXPECT_EQ(out.find("GH100"), std::string::npos) << out;

  const Child missing = run_child([] {
    with_devices({kH100, kA100});
    launcher::MetricQuery q;
    q.devices = {0, 2};
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_metric_query(q, o, e); });
  });
  ASSERT_TRUE(missing.exited_zero()) << missing.err;
  EXPECT_EQ(missing.err,
            "rc 2\n--out\n--err\nrfprof: --devices 2: no such CUDA device (this machine has 2, 0 to 1)\n");

  // --csv: one "1" column per chip, in device order, so two GH100s make one column.
  const Child csv = run_child([] {
    with_devices({kH100, kH100, kA100});
    set_device_chip(2, "GA100");
    launcher::MetricQuery q;
    q.metrics = {"dram__bytes_read.sum"};
    q.csv = true;
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_metric_query(q, o, e); });
  });
  ASSERT_TRUE(csv.exited_zero()) << csv.err;
  const std::string table = part(csv.err, "--out\n", "--err\n");
  const std::string header = table.substr(0, table.find('\n'));
  EXPECT_EQ(header, "\"Metric name\",\"Metric type\",\"Metric unit\",\"Metric description\",\"GH100\",\"GA100\"");
  EXPECT_NE(table.find("\n\"dram__bytes_read.sum\",\"Counter\",\"byte\","), std::string::npos) << table;
}

TEST_F(FakeDriverQueryTest, QueryMetricsHostApiWithoutAUsableDriverAsksForChips) {
  const Child none = run_child([] {
    with_devices({});
    launcher::MetricQuery q;
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_metric_query(q, o, e); });
  });
  ASSERT_TRUE(none.exited_zero()) << none.err;
  EXPECT_EQ(none.err,
            "rc 2\n--out\n--err\nrfprof: --query-metrics: the driver reports no CUDA device; name the chips with "
            "--chips (rfprof --list-chips lists them)\n");

  const Child init = run_child([] {
    with_devices({kH100});
    fail_driver("cuInit", CUDA_ERROR_NO_DEVICE);
    launcher::MetricQuery q;
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_metric_query(q, o, e); });
  });
  ASSERT_TRUE(init.exited_zero()) << init.err;
  EXPECT_EQ(init.err,
            "rc 2\n--out\n--err\nrfprof: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA device is visible to this "
            "process); name the chips with --chips (rfprof --list-chips lists them)\n");
}

TEST_F(FakeDriverQueryTest, ListSetsHostApiPlansForTheFirstDevicesChip) {
  const Child a100 = run_child([] {
    with_devices({kA100, kH100});
    set_device_chip(0, "GA100");
    launcher::Listing l;
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_listing(l, o, e); });
  });
  ASSERT_TRUE(a100.exited_zero()) << a100.err;
  EXPECT_EQ(a100.err.rfind("rc 0\n", 0), 0u) << a100.err;
  EXPECT_NE(part(a100.err, "--out\n", "--err\n").find("roofline: 2 pass(es), 15 metric(s) on GA100 -- "),
            std::string::npos)
      << a100.err;
  EXPECT_EQ(part(a100.err, "--err\n"), "");  // no note: the chip is the device's

  const Child none = run_child([] {
    with_devices({});
    launcher::Listing l;
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_listing(l, o, e); });
  });
  ASSERT_TRUE(none.exited_zero()) << none.err;
  EXPECT_NE(part(none.err, "--out\n", "--err\n").find(" metric(s) on GH100 -- "), std::string::npos) << none.err;
  EXPECT_EQ(part(none.err, "--err\n"),
            "rfprof: note: listing for GH100, since no --chip is given and this machine has no CUDA device to ask: the "
            "driver reports no CUDA device; --chip CHIP lists for another chip\n");

  // The driver's refusal, in the note without a second "rfprof: ".
  const Child init = run_child([] {
    with_devices({kA100});
    fail_driver("cuInit", CUDA_ERROR_NO_DEVICE);
    launcher::Listing l;
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_listing(l, o, e); });
  });
  ASSERT_TRUE(init.exited_zero()) << init.err;
  EXPECT_EQ(part(init.err, "--err\n"),
            "rfprof: note: listing for GH100, since no --chip is given and this machine has no CUDA device to ask: "
            "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA device is visible to this process); --chip CHIP lists for "
            "another chip\n");

  const Child refused = run_child([] {
    with_devices({kA100});
    set_device_chip(0, "GA100");
    fail("cuptiDeviceGetChipName", CUPTI_ERROR_NOT_SUPPORTED);
    launcher::Listing l;
    l.quiet = true;
    print_run([&](std::ostream& o, std::ostream& e) { return launcher::run_listing(l, o, e); });
  });
  ASSERT_TRUE(refused.exited_zero()) << refused.err;
  // --quiet: GH100 without the note.
  EXPECT_NE(part(refused.err, "--out\n", "--err\n").find(" metric(s) on GH100 -- "), std::string::npos)
      << refused.err;
  EXPECT_EQ(part(refused.err, "--err\n"), "");
}

}  // namespace
}  // namespace rf::fake_cupti
