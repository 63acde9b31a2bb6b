// Ceilings database (built-in datasheet, user files, --device) and the roofline check.
#include <gtest/gtest.h>

#include <fstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/ceilings.h"
#include "rfprof/analyzer/roof.h"

namespace rf::analyzer {
namespace {

std::string matched(std::string_view name, std::string_view chip) {
  const CeilingEntry* e = CeilingDb::builtin().match(name, chip);
  return e ? e->name : "(none)";
}

TEST(Ceilings, DatasheetMatchesTheDeviceNamesCudaReports) {
  EXPECT_EQ(matched("NVIDIA H100 80GB HBM3", "GH100"), "H100 SXM5");
  EXPECT_EQ(matched("NVIDIA H100 PCIe", "GH100"), "H100 PCIe");
  EXPECT_EQ(matched("NVIDIA H200", "GH100"), "H200 SXM");
  EXPECT_EQ(matched("NVIDIA H200 NVL", "GH100"), "H200 NVL");
  EXPECT_EQ(matched("NVIDIA A100-SXM4-40GB", "GA100"), "A100 SXM4 40GB");
  EXPECT_EQ(matched("NVIDIA A100-SXM4-80GB", "GA100"), "A100 SXM4 80GB");
  EXPECT_EQ(matched("NVIDIA A100 80GB PCIe", "GA100"), "A100 PCIe 80GB");
  EXPECT_EQ(matched("Tesla V100-SXM2-16GB", "GV100"), "V100 SXM2");
  EXPECT_EQ(matched("Tesla V100-SXM2-32GB", ""), "V100 SXM2");  // chip unknown: name decides
  EXPECT_EQ(matched("NVIDIA H100 80GB HBM3", "GA100"), "(none)");  // chip disagrees
  EXPECT_EQ(matched("NVIDIA A100-PCIE-40GB", "GA100"), "A100 PCIe 40GB");
  EXPECT_EQ(matched("Tesla V100-PCIE-32GB", "GV100"), "V100 PCIe");
  EXPECT_EQ(matched("Tesla T4", "TU104"), "T4");
  EXPECT_EQ(matched("Tesla P100-PCIE-16GB", "GP100"), "P100 PCIe 16GB");
  EXPECT_EQ(matched("Tesla P100-SXM2-16GB", "GP100"), "P100 SXM2");
  EXPECT_EQ(matched("NVIDIA L4", "AD104"), "L4");
  EXPECT_EQ(matched("NVIDIA L40S", "AD102"), "L40S");
  EXPECT_EQ(matched("NVIDIA A10", "GA102"), "A10");
  EXPECT_EQ(matched("NVIDIA A100-SXM4-80GB", ""), "A100 SXM4 80GB");  // "A10" must not match it
  EXPECT_EQ(matched("NVIDIA GeForce RTX 4090", "AD102"), "RTX 4090");
  EXPECT_EQ(matched("NVIDIA B200", "GB100"), "B200");
  EXPECT_EQ(matched("NVIDIA GeForce RTX 3090", "GA102"), "(none)");
  // Names that hold another entry's name: a GH200 (a GH100, 4 TB/s with HBM3) took the H200's
  // 4.8 TB/s, a GB200 the B200's ceilings (a review). They match no entry now: the bandwidth CUPTI
  // reports, no compute ceilings.
  EXPECT_EQ(matched("NVIDIA GH200 480GB", "GH100"), "(none)");
  EXPECT_EQ(matched("NVIDIA GH200 144G HBM3e", ""), "(none)");
  EXPECT_EQ(matched("NVIDIA GB200", "GB100"), "(none)");
  EXPECT_EQ(matched("NVIDIA H200", ""), "H200 SXM");
  EXPECT_EQ(matched("NVIDIA A100-SXM-80GB", "GA100"), "A100 SXM4 80GB");
}

TEST(Ceilings, DatasheetEntriesAreConsistent) {
  const auto& entries = CeilingDb::builtin().entries();
  ASSERT_GE(entries.size(), 19u);
  for (const char* name : {"V100 SXM2", "V100 PCIe", "T4", "P100 SXM2", "A100 SXM4 40GB", "A100 SXM4 80GB",
                           "H100 SXM5", "H100 PCIe", "H200 SXM", "L4", "L40S", "A10", "RTX 4090", "B200"})
    EXPECT_NE(CeilingDb::builtin().find(name), nullptr) << name;
  for (const auto& e : entries) {
    SCOPED_TRACE(e.name);
    EXPECT_FALSE(e.citation.empty());
    EXPECT_NE(e.citation.find("http"), std::string::npos);  // every entry cites a document
    EXPECT_FALSE(e.patterns.empty());
    EXPECT_FALSE(e.measured);
    ASSERT_TRUE(e.dram_bytes_per_s);
    EXPECT_GT(*e.dram_bytes_per_s, 1e11);  // bytes/s, not GB/s
    EXPECT_LT(*e.dram_bytes_per_s, 1e13);
    if (e.fp32_flop_per_s) {
      EXPECT_GT(*e.fp32_flop_per_s, 1e12);  // FLOP/s, not TFLOP/s
      if (e.fp64_flop_per_s) { EXPECT_LE(*e.fp64_flop_per_s, *e.fp32_flop_per_s); }
      if (e.fp16_flop_per_s) { EXPECT_GE(*e.fp16_flop_per_s, *e.fp32_flop_per_s); }
    }
    // Tensor peaks: each above its non-tensor peak; FP16 = BF16 where both exist; FP8 = 2 x FP16
    // on Hopper/Ada/Blackwell and TF32 = FP16 / 2 (data-center chips). A GeForce chip runs FP16
    // with FP16 accumulate twice as fast as with FP32 accumulate, and its FP16 roof is the faster
    // rate (TensorRoofsAreTheFastestAccumulateRate): FP16 = 2 x BF16 and TF32 = FP16 / 4 there.
    const bool geforce = e.name.rfind("RTX", 0) == 0;
    const auto& t = e.tensor_flop_per_s;
    if (t[0] && e.fp64_flop_per_s) { EXPECT_GE(*t[0], *e.fp64_flop_per_s); }
    if (t[1] && e.fp32_flop_per_s) { EXPECT_GE(*t[1], *e.fp32_flop_per_s); }
    if (t[2] && t[3]) { EXPECT_NEAR(*t[2] / *t[3], geforce ? 2.0 : 1.0, 0.01); }
    if (t[2] && t[4]) { EXPECT_NEAR(*t[4] / *t[2], 2.0, 0.03); }  // L40S: 733 / 362.05
    if (t[1] && t[2]) { EXPECT_NEAR(*t[2] / *t[1], geforce ? 4.0 : 2.0, 0.03); }  // datasheets round (L4: 121 / 60, L40S: 362.05 / 183)
    for (const auto& v : t)
      if (v) {
        EXPECT_GT(*v, 1e13);
        EXPECT_LT(*v, 1e16);
      }
    EXPECT_EQ(CeilingDb::builtin().find(e.name), &e);
  }
  // Ridge points (FLOP/byte at which FP32 meets DRAM) of a few entries, from their datasheets.
  auto ridge = [](const char* n) {
    const CeilingEntry* entry = CeilingDb::builtin().find(n);
    return *entry->fp32_flop_per_s / *entry->dram_bytes_per_s;
  };
  EXPECT_NEAR(ridge("H100 SXM5"), 67e12 / 3.35e12, 1e-9);
  EXPECT_NEAR(ridge("A100 SXM4 80GB"), 19.5e12 / 2.039e12, 1e-9);
  EXPECT_NEAR(ridge("T4"), 8.1e12 / 320e9, 1e-9);
}

TEST(Ceilings, ResolveNamesTheDatasheet) {
  CeilingSources s{&CeilingDb::builtin(), nullptr, "", std::nullopt};
  DeviceCeilings c = resolve_ceilings("NVIDIA H100 80GB HBM3", "GH100", 0, s);
  const CeilingEntry* e = CeilingDb::builtin().find("H100 SXM5");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(c.datasheet_entry, "H100 SXM5");
  EXPECT_EQ(c.fp32.value, e->fp32_flop_per_s);
  EXPECT_EQ(c.dram.value, e->dram_bytes_per_s);
  EXPECT_EQ(c.fp32.source, "datasheet: H100 SXM5 (" + e->citation + ")");
  ASSERT_TRUE(e->l2_bytes);
  EXPECT_EQ(c.l2_bytes.value, e->l2_bytes);             // 50 MiB, a size
  EXPECT_FALSE(c.l2_bandwidth.value.has_value());       // the datasheet gives no L2 bandwidth
}

// A roof is the fastest rate: a GeForce RTX 4090 runs FP16 tensor math with FP16 accumulate twice
// as fast as with FP32 accumulate (Ada whitepaper, Appendix A), and the FP16 tensor counters do not
// tell the two apart. An FP16-accumulate GEMM at 300 TFLOP/s is under its roof, not a bug (the
// FP32-accumulate 165.2 TFLOP/s made it 1.82x above the roof, a review).
TEST(Ceilings, TensorRoofsAreTheFastestAccumulateRate) {
  CeilingSources s{&CeilingDb::builtin(), nullptr, "", std::nullopt};
  const DeviceCeilings c = resolve_ceilings("NVIDIA GeForce RTX 4090", "AD102", 0, s);
  LaunchMetrics m;
  m.fp64_flop = 0;
  m.fp32_flop = 0;
  m.fp16_flop = 0;
  m.dram_read_bytes = 1e6;
  m.dram_write_bytes = 1e6;
  m.tensor_dense[2] = 3e11;  // FP16: 3e11 FLOP in 1 ms = 300 TFLOP/s
  const RoofCheck r = check_roof(m, uint64_t{1000000}, c);
  ASSERT_TRUE(r.achieved_flop_per_s);
  EXPECT_DOUBLE_EQ(*r.achieved_flop_per_s, 3e14);
  EXPECT_FALSE(r.above_compute);
  m.tensor_dense[2].reset();
  m.tensor_dense[4] = 6e11;  // FP8 with FP16 accumulate: 600 TFLOP/s of 660.6
  EXPECT_FALSE(check_roof(m, uint64_t{1000000}, c).above_compute);
}

// A user entry: a null chip matches any chip, patterns ignore case, --device may name it alone, and
// a value that is not measured carries no datasheet value to compare with.
TEST(Ceilings, UserEntryWithoutChipMatchesIgnoringCaseAndCanBeForced) {
  testing::TempDir dir;
  auto file = dir.path / "mine.json";
  std::ofstream(file) << R"({"devices": [{"name": "My Board", "chip": null, "patterns": ["h100 80gb"],
                             "dram_bytes_per_s": 3.0e12}]})";
  CeilingDb user = CeilingDb::from_file(file);
  ASSERT_EQ(user.entries().size(), 1u);
  EXPECT_EQ(user.entries()[0].chip, "");
  CeilingSources s{&CeilingDb::builtin(), &user, file.string(), std::nullopt};
  DeviceCeilings c = resolve_ceilings("NVIDIA H100 80GB HBM3", "GH100", 0, s);
  EXPECT_EQ(c.user_entry, "My Board");
  EXPECT_EQ(c.datasheet_entry.rfind("H100 SXM5", 0), 0u) << "the datasheet entry matched too";
  EXPECT_EQ(c.dram.value, 3.0e12);
  EXPECT_FALSE(c.dram.measured);
  EXPECT_FALSE(c.dram.datasheet.has_value());
  EXPECT_FALSE(c.dram.ratio_to_datasheet().has_value());

  s.forced = "my board";  // in the user file only
  EXPECT_NO_THROW(validate_forced_device(s));
  s.forced = "no such board";
  try {
    validate_forced_device(s);
    ADD_FAILURE() << "no error for an unknown --device";
  } catch (const CeilingsError& e) {  // the user file's entries first, then the datasheet's
    EXPECT_NE(std::string(e.what()).find("known entries: \"My Board\", \"H100 SXM5"), std::string::npos) << e.what();
  }
  s.forced = "my board";
  DeviceCeilings f = resolve_ceilings("some unknown board", "", 0, s);
  EXPECT_EQ(f.user_entry, "My Board");
  EXPECT_EQ(f.datasheet_entry, "");
  EXPECT_EQ(f.dram.value, 3.0e12);
  EXPECT_FALSE(f.fp32.value.has_value());
}

// A chip is compared without case, and an entry of another chip does not match whatever its
// patterns say.
TEST(Ceilings, ChipsMatchIgnoringCase) {
  const CeilingDb db = CeilingDb::parse(
      R"({"devices": [{"name": "other", "chip": "GA100", "patterns": ["H100"]},
                      {"name": "mine", "chip": "gh100", "patterns": ["H100"]}]})",
      "chips");
  const CeilingEntry* e = db.match("NVIDIA H100 80GB HBM3", "GH100");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "mine");
  EXPECT_EQ(db.match("NVIDIA H100 80GB HBM3", "GB100"), nullptr);
  // A device name from a hostile trace is searched in its first 4096 bytes only.
  EXPECT_EQ(db.match(std::string(1 << 20, 'x') + "H100", "GH100"), nullptr);
  EXPECT_NE(db.match(std::string(4000, 'x') + "H100", "GH100"), nullptr);
}

// Both files' entries must be of the device's chip; a value no entry has has no source; a
// reported bandwidth of 0 is none.
TEST(Ceilings, ResolveChecksChipsAndLeavesMissingValuesWithoutSource) {
  const CeilingDb user = CeilingDb::parse(
      R"({"devices": [{"name": "blackwell", "chip": "GB100", "patterns": ["H100"], "fp32_flop_per_s": 1e14}]})", "u");
  const CeilingSources s{&CeilingDb::builtin(), &user, "u.json", std::nullopt};
  const DeviceCeilings h100 = resolve_ceilings("NVIDIA H100 80GB HBM3", "GH100", 0, s);
  EXPECT_EQ(h100.user_entry, "");
  EXPECT_EQ(h100.datasheet_entry.rfind("H100 SXM5", 0), 0u);
  EXPECT_FALSE(h100.l2_bandwidth.value.has_value());  // measured by rfbench, not on a datasheet
  EXPECT_EQ(h100.l2_bandwidth.source, "");
  const DeviceCeilings other = resolve_ceilings("NVIDIA H100 80GB HBM3", "GA100", 0, s);
  EXPECT_EQ(other.user_entry, "");
  EXPECT_EQ(other.datasheet_entry, "");
  EXPECT_FALSE(other.dram.value.has_value());
  EXPECT_EQ(other.dram.source, "");
}

TEST(Ceilings, UserFileOverridesFieldByField) {
  testing::TempDir dir;
  auto file = dir.path / "measured.json";
  std::ofstream(file) << R"({"devices": [{"name": "measured H100", "chip": "GH100",
                             "patterns": ["H100"], "dram_bytes_per_s": 3.0e12}]})";
  CeilingDb user = CeilingDb::from_file(file);
  CeilingSources s{&CeilingDb::builtin(), &user, file.string(), std::nullopt};
  DeviceCeilings c = resolve_ceilings("NVIDIA H100 80GB HBM3", "GH100", 0, s);
  EXPECT_EQ(c.user_entry, "measured H100");
  EXPECT_EQ(c.dram.value, 3.0e12);
  EXPECT_EQ(c.dram.source, "user file: " + file.string());
  EXPECT_EQ(c.fp32.value, CeilingDb::builtin().find("H100 SXM5")->fp32_flop_per_s);
  EXPECT_EQ(c.fp32.source.rfind("datasheet: H100 SXM5", 0), 0u);
}

TEST(Ceilings, ForcedDeviceAndReportedBandwidth) {
  CeilingSources s{&CeilingDb::builtin(), nullptr, "", std::string("a100 sxm4 80gb")};
  validate_forced_device(s);
  DeviceCeilings c = resolve_ceilings("some unknown board", "", 0, s);
  EXPECT_EQ(c.datasheet_entry, "A100 SXM4 80GB");
  EXPECT_EQ(c.dram.value, CeilingDb::builtin().find("A100 SXM4 80GB")->dram_bytes_per_s);

  s.forced = "no such board";
  try {
    validate_forced_device(s);
    ADD_FAILURE() << "no error";
  } catch (const CeilingsError& e) {
    EXPECT_NE(std::string(e.what()).find("\"H100 SXM5\""), std::string::npos) << e.what();
  }

  s.forced.reset();  // no entry: the device's own bandwidth (KB/s) is the DRAM ceiling
  DeviceCeilings r = resolve_ceilings("NVIDIA GeForce RTX 3090", "GA102", 936000000, s);
  EXPECT_EQ(r.dram.value, 936000000.0 * 1000.0);
  EXPECT_EQ(r.dram.source, "device: CUPTI globalMemoryBandwidth");
  EXPECT_FALSE(r.fp32.value.has_value());
}

TEST(Ceilings, BadUserFiles) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      CeilingDb::parse(text, "ceilings file X.json");
      ADD_FAILURE() << "no error for " << text;
    } catch (const CeilingsError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("X.json"), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  };
  expect_error("[]", "expected {\"devices\"");
  expect_error("{\"devices\": [{\"patterns\": []}]}", "\"name\"");
  expect_error("{\"devices\": [{\"name\": \"a\", \"fp32_flop_per_s\": -1}]}", "positive");
  expect_error("{\"devices\": [{\"name\": \"a\", \"fp32_flop_per_s\": 0}]}", "\"fp32_flop_per_s\" must be positive");
  expect_error("{\"devices\": 5}", "expected {\"devices\": [...]}");
  expect_error("{\"devices\": [{\"name\": 5}]}", "devices[0]: expected an object with a string \"name\"");
  expect_error("{\"devices\": [{\"name\": \"a\", \"patterns\": [\"H100\", 5]}]}",
               "\"patterns\" must be a list of strings");
  expect_error("{\"devices\": [{\"name\": \"a\", \"measured\": \"yes\"}]}", "\"measured\" must be true or false");
  expect_error("{\"devices\": [{\"name\": \"a\", \"chip\": 100}]}", "devices[0] (\"a\"): \"chip\" must be a string");
  expect_error("{\"devices\": [{\"name\": \"a\", \"patterns\": \"H100\"}]}", "\"patterns\" must be a list of strings");
  expect_error("{\"devices\": [{\"name\": \"a\", \"citation\": 5}]}", "\"citation\" must be a string");
  expect_error("{\"devices\": [{\"name\": \"a\", \"patterns\": [\"(\"]}]}", "pattern \"(\" is not a valid regex: ");
  // Positive but absurd (once accepted, and its roofline axis never ended):
  expect_error("{\"devices\": [{\"name\": \"a\", \"fp32_flop_per_s\": 1e308}]}",
               "\"fp32_flop_per_s\" = 1e+308 is outside the plausible range 1e+06 to 1e+20 (FLOP/s or bytes/s of "
               "one device)");
  expect_error("{\"devices\": [{\"name\": \"a\", \"dram_bytes_per_s\": 4e-323}]}", "outside the plausible range");
  expect_error("{\"devices\": [{\"name\": \"a\", \"l2_bytes\": 5e13}]}", "1000 to 1e+12 (bytes)");
  // A key the schema lacks is refused with the closest one: a misspelt ceiling left the
  // datasheet's value in place silently (INT8's key is the one ending in _op_per_s).
  expect_error("{\"devices\": [{\"name\": \"a\", \"fp32_flops_per_s\": 5e13}]}",
               "devices[0] (\"a\"): \"fp32_flops_per_s\" is not a ceilings key (closest: \"fp32_flop_per_s\"");
  expect_error("{\"devices\": [{\"name\": \"a\", \"tensor_int8_flop_per_s\": 1e15}]}",
               "(closest: \"tensor_int8_op_per_s\"");
  expect_error("{\"devices\": [{\"name\": \"a\", \"dram_bandwidth_bytes_per_s\": 2e12}]}",
               "(closest: \"dram_bytes_per_s\"");
  // Keys outside the entries stay free (rfbench's "about" and "measurements").
  EXPECT_NO_THROW(CeilingDb::parse(R"({"about": "x", "measurements": [], "devices": [{"name": "a"}]})", "top"));
  // "measured" as written; a null chip or citation is none.
  const CeilingDb flags = CeilingDb::parse(
      R"({"devices": [{"name": "m", "measured": true, "citation": null, "chip": null},
                      {"name": "d", "measured": false, "citation": "a datasheet"}]})",
      "flags");
  ASSERT_EQ(flags.entries().size(), 2u);
  EXPECT_TRUE(flags.entries()[0].measured);
  EXPECT_FALSE(flags.entries()[1].measured);
  EXPECT_EQ(flags.entries()[1].citation, "a datasheet");
  // A file's errors name its whole path.
  testing::TempDir dir;
  std::ofstream(dir.path / "bad.json") << "{";
  try {
    CeilingDb::from_file(dir.path / "bad.json");
    ADD_FAILURE() << "no error for a file that is not JSON";
  } catch (const CeilingsError& e) {
    EXPECT_NE(std::string(e.what()).find("ceilings file " + (dir.path / "bad.json").string() + ": not valid JSON"),
              std::string::npos)
        << e.what();
  }
  // The range's ends belong to it.
  const CeilingDb edges = CeilingDb::parse(
      R"({"devices": [{"name": "a", "fp64_flop_per_s": 1e6, "fp32_flop_per_s": 1e20, "l2_bytes": 1e3},
                      {"name": "b", "l2_bytes": 1e12}]})",
      "edges");
  ASSERT_EQ(edges.entries().size(), 2u);
  EXPECT_EQ(edges.entries()[0].fp64_flop_per_s, 1e6);
  EXPECT_EQ(edges.entries()[0].fp32_flop_per_s, 1e20);
  EXPECT_EQ(edges.entries()[0].l2_bytes, 1e3);
  EXPECT_EQ(edges.entries()[1].l2_bytes, 1e12);
  expect_error("{\"devices\": [{\"name\": \"a\", \"fp32_flop_per_s\": \"67 TF\"}]}",
               "\"fp32_flop_per_s\" must be a number or null");
  expect_error("{\"devices\": [{\"name\": \"a\", \"patterns\": [\"(\"]}]}", "regex");
  expect_error("{", "not valid JSON");
  try {
    CeilingDb::from_file("/nonexistent/ceilings.json");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const CeilingsError& e) {
    EXPECT_EQ(std::string(e.what()), "ceilings file /nonexistent/ceilings.json: cannot be opened");
  }
  try {
    CeilingDb::from_file(std::filesystem::temp_directory_path());
    ADD_FAILURE() << "no error for a directory";
  } catch (const CeilingsError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory (expected a JSON file)"), std::string::npos) << e.what();
  }
}

DeviceCeilings toy_ceilings() {
  DeviceCeilings c;
  c.fp64.value = 1e12;
  c.fp32.value = 2e12;
  c.dram.value = 1e11;
  return c;  // no FP16 ceiling
}

LaunchMetrics metrics(double fp64, double fp32, double fp16, double bytes) {
  LaunchMetrics m;
  m.fp64_flop = fp64;
  m.fp32_flop = fp32;
  m.fp16_flop = fp16;
  m.dram_read_bytes = bytes;
  m.dram_write_bytes = 0.0;
  return m;
}

TEST(Roof, PeakOfAPrecisionMix) {
  DeviceCeilings c = toy_ceilings();
  EXPECT_EQ(mix_peak_flop_per_s(metrics(0, 4e6, 0, 1), c), 2e12);
  // 1e6 FLOP at 1e12 and 1e6 FLOP at 2e12 take 1.5 us at best: 2e6 / 1.5e-6.
  EXPECT_DOUBLE_EQ(*mix_peak_flop_per_s(metrics(1e6, 1e6, 0, 1), c), 2e6 / 1.5e-6);
  EXPECT_FALSE(mix_peak_flop_per_s(metrics(0, 1e6, 1e6, 1), c).has_value());  // FP16 ceiling unknown
  EXPECT_FALSE(mix_peak_flop_per_s(metrics(0, 0, 0, 1), c).has_value());
}

TEST(Roof, PointsBelowTheRoofAreNotFlagged) {
  DeviceCeilings c = toy_ceilings();
  // 1e6 FP32 FLOP and 1e4 bytes in 1 ms: 1e9 FLOP/s, 1e7 bytes/s.
  RoofCheck r = check_roof(metrics(0, 1e6, 0, 1e4), uint64_t{1000000}, c);
  EXPECT_FALSE(r.above());
  EXPECT_DOUBLE_EQ(*r.achieved_flop_per_s, 1e9);
  // AI = 100 FLOP/byte: min(2e12, 100 * 1e11) = 2e12.
  EXPECT_DOUBLE_EQ(*r.attainable_flop_per_s, 2e12);
  // Close under both ceilings is still under them: 1.98e9 FLOP and 9.9e7 bytes in 1 ms are
  // 99 % of 2e12 FLOP/s and of 1e11 bytes/s.
  r = check_roof(metrics(0, 1.98e9, 0, 9.9e7), uint64_t{1000000}, c);
  EXPECT_FALSE(r.above_compute);
  EXPECT_FALSE(r.above_memory);
  EXPECT_DOUBLE_EQ(*r.dram_bytes_per_s, 9.9e10);
}

// Toy ceilings: FP32 2e12 FLOP/s, DRAM 1e11 bytes/s, so the ridge point is at 20 FLOP/byte.
TEST(Roof, BoundSaysWhichSideOfTheRidgeTheLaunchIs) {
  DeviceCeilings c = toy_ceilings();
  // AI 100 FLOP/byte, right of the ridge: compute-bound, 1e9 of 2e12 FLOP/s attainable.
  RoofCheck r = check_roof(metrics(0, 1e6, 0, 1e4), uint64_t{1000000}, c);
  EXPECT_STREQ(r.bound(), "compute");
  EXPECT_DOUBLE_EQ(*r.roof_fraction(), 1e9 / 2e12);
  // AI 10 FLOP/byte, left of it: memory-bound, the roof is 10 * 1e11 = 1e12 FLOP/s; 1e5 FLOP in
  // 0.1 ms is 1e9 FLOP/s.
  r = check_roof(metrics(0, 1e5, 0, 1e4), uint64_t{100000}, c);
  EXPECT_STREQ(r.bound(), "memory");
  EXPECT_DOUBLE_EQ(*r.memory_roof_flop_per_s, 1e12);
  EXPECT_DOUBLE_EQ(*r.attainable_flop_per_s, 1e12);
  EXPECT_DOUBLE_EQ(*r.roof_fraction(), 1e-3);
  // The roofs need no duration; the fraction does.
  r = check_roof(metrics(0, 1e5, 0, 1e4), std::nullopt, c);
  EXPECT_STREQ(r.bound(), "memory");
  EXPECT_FALSE(r.roof_fraction().has_value());
  // No FLOP but DRAM bytes (a copy), tensor-core FLOP measured (0 here): AI 0, left of the ridge,
  // so memory-bound although its mix has no compute peak; the fraction of its roof is its DRAM
  // bandwidth's: 1e4 bytes in 1 µs is 1e10 bytes/s of 1e11.
  LaunchMetrics copy = metrics(0, 0, 0, 1e4);
  copy.tensor_dense[0] = 0.0;
  r = check_roof(copy, uint64_t{1000}, c);
  EXPECT_FALSE(r.compute_peak_flop_per_s.has_value());
  EXPECT_STREQ(r.bound(), "memory");
  EXPECT_DOUBLE_EQ(*r.roof_fraction(), 0.1);
  // Without tensor-core metrics a total of 0 may be a tensor-core kernel's uncounted work: no bound.
  r = check_roof(metrics(0, 0, 0, 1e4), uint64_t{1000}, c);
  EXPECT_STREQ(r.bound(), "");
  EXPECT_FALSE(r.roof_fraction().has_value());
  // Without a duration there is no bandwidth; without FLOP and DRAM bytes no intensity.
  EXPECT_FALSE(check_roof(copy, std::nullopt, c).roof_fraction().has_value());
  LaunchMetrics nothing = metrics(0, 0, 0, 0);
  nothing.tensor_dense[0] = 0.0;
  EXPECT_STREQ(check_roof(nothing, uint64_t{1000}, c).bound(), "");
  // FLOP and no DRAM byte (all in L2): AI infinite, right of the ridge; its roof is the compute
  // peak: 1e6 FP32 FLOP in 1 ms is 1e9 of 2e12 FLOP/s.
  r = check_roof(metrics(0, 1e6, 0, 0), uint64_t{1000000}, c);
  EXPECT_STREQ(r.bound(), "compute");
  EXPECT_DOUBLE_EQ(*r.roof_fraction(), 1e9 / 2e12);
  // Under the memory roof with FLOP the fraction is the same bandwidth ratio: 1e5 FLOP and 1e4
  // bytes in 0.1 ms (above: 1e-3) is 1e8 bytes/s of 1e11.
  r = check_roof(metrics(0, 1e5, 0, 1e4), uint64_t{100000}, c);
  EXPECT_DOUBLE_EQ(*r.roof_fraction(), *r.dram_bytes_per_s / 1e11);
  // A precision without a ceiling (FP16 here): the compute roof is unknown.
  EXPECT_STREQ(check_roof(metrics(0, 0, 1e6, 1e4), uint64_t{1000}, c).bound(), "");
}

TEST(Roof, AboveTheComputeCeiling) {
  DeviceCeilings c = toy_ceilings();
  // 4e9 FP32 FLOP in 1 ms = 4e12 FLOP/s > 2e12; bytes tiny so the memory roof is high.
  RoofCheck r = check_roof(metrics(0, 4e9, 0, 1e3), uint64_t{1000000}, c);
  EXPECT_TRUE(r.above_compute);
  EXPECT_FALSE(r.above_memory);
  EXPECT_TRUE(r.above());
}

TEST(Roof, AboveTheBandwidthCeiling) {
  DeviceCeilings c = toy_ceilings();
  // 1e9 bytes in 1 ms = 1e12 bytes/s > 1e11, with almost no FLOP.
  RoofCheck r = check_roof(metrics(0, 10, 0, 1e9), uint64_t{1000000}, c);
  EXPECT_TRUE(r.above_memory);
  EXPECT_FALSE(r.above_compute);
  EXPECT_LT(*r.attainable_flop_per_s, *r.achieved_flop_per_s);  // AI * bandwidth is the roof
}

// A measured (rfbench) ceiling is a lower bound of the peak: a launch up to 10 % above it is a
// warning, further above it or above a datasheet ceiling an error.
TEST(Roof, SlightlyAboveMeasuredCeilingsIsAWarning) {
  DeviceCeilings c = toy_ceilings();
  c.dram.measured = true;
  c.dram.datasheet = 1.2e11;
  // 1.05e8 bytes in 1 ms = 1.05e11 bytes/s: 5 % above the measured 1e11, below the datasheet.
  RoofCheck r = check_roof(metrics(0, 10, 0, 1.05e8), uint64_t{1000000}, c);
  EXPECT_TRUE(r.above_memory);
  EXPECT_DOUBLE_EQ(r.excess, 1.05);
  EXPECT_TRUE(r.only_measured_ceilings_exceeded);
  EXPECT_STREQ(r.severity(), "warning");
  // 15 % above: an error.
  r = check_roof(metrics(0, 10, 0, 1.15e8), uint64_t{1000000}, c);
  EXPECT_STREQ(r.severity(), "error");
  // Within 10 % of the measured value but above the datasheet's: an error.
  c.dram.datasheet = 1.02e11;
  r = check_roof(metrics(0, 10, 0, 1.05e8), uint64_t{1000000}, c);
  EXPECT_STREQ(r.severity(), "error");
  // The same point against a datasheet (not measured) ceiling: an error.
  DeviceCeilings d = toy_ceilings();
  r = check_roof(metrics(0, 10, 0, 1.05e8), uint64_t{1000000}, d);
  EXPECT_TRUE(r.above_memory);
  EXPECT_STREQ(r.severity(), "error");
  // Compute: 2.1e12 FP32 FLOP/s against a measured 2e12 is a warning, against a datasheet one an error.
  d.fp32.measured = true;
  r = check_roof(metrics(0, 2.1e9, 0, 1e3), uint64_t{1000000}, d);
  EXPECT_TRUE(r.above_compute);
  EXPECT_STREQ(r.severity(), "warning");
  r = check_roof(metrics(1e6, 2.1e9, 0, 1e3), uint64_t{1000000}, d);  // FP64 ceiling not measured
  EXPECT_STREQ(r.severity(), "error");
  // A tensor-core term in the mix: its ceiling, a datasheet value, makes the peak unmeasured.
  d.tensor[1].value = 16e12;  // TF32 dense
  LaunchMetrics tf32 = metrics(0, 2.1e9, 0, 1e3);
  tf32.tensor_dense[1] = 8e6;  // 0.5 us at its ceiling beside the 1.05 ms of FP32
  r = check_roof(tf32, uint64_t{1000000}, d);
  ASSERT_TRUE(r.above_compute);
  EXPECT_STREQ(r.severity(), "error");
  d.tensor[1].measured = true;
  EXPECT_STREQ(check_roof(tf32, uint64_t{1000000}, d).severity(), "warning");
}

TEST(Roof, UnknownsFlagNothing) {
  DeviceCeilings c = toy_ceilings();
  EXPECT_FALSE(check_roof(metrics(0, 4e9, 0, 1e9), std::nullopt, c).above());
  EXPECT_FALSE(check_roof(metrics(0, 4e9, 0, 1e9), uint64_t{0}, c).above());
  EXPECT_FALSE(check_roof(metrics(0, 0, 4e9, 1), uint64_t{1000}, c).above_compute);  // no FP16 ceiling
  EXPECT_FALSE(check_roof(LaunchMetrics{}, uint64_t{1000}, c).above());
}

TEST(Roof, TensorFlopWithoutTensorCeilingsFlagNothing) {
  DeviceCeilings c = toy_ceilings();
  // 4e9 TF32 tensor FLOP in 1 ms (4e12 FLOP/s) would be above the 2e12 FP32 ceiling, but tensor
  // cores have their own, higher ceilings: without them the peak of the mix is unknown.
  LaunchMetrics m = metrics(0, 0, 0, 1e3);
  m.tensor_dense[1] = 4e9;
  EXPECT_FALSE(mix_peak_flop_per_s(m, c).has_value());
  RoofCheck r = check_roof(m, uint64_t{1000000}, c);
  EXPECT_FALSE(r.above_compute);
  EXPECT_DOUBLE_EQ(*r.achieved_flop_per_s, 4e12);
}

TEST(Roof, TensorTermsUseTheirCeilingsAndSparseTwice) {
  DeviceCeilings c = toy_ceilings();  // FP32 2e12
  c.tensor[1].value = 16e12;          // TF32 dense
  LaunchMetrics m = metrics(0, 1e6, 0, 1);
  m.tensor_dense[1] = 8e6;
  m.tensor_sparse[1] = 16e6;
  // 1e6 at 2e12 + 8e6 at 16e12 + 16e6 at 32e12: 0.5 + 0.5 + 0.5 us for 25e6 FLOP.
  EXPECT_DOUBLE_EQ(*mix_peak_flop_per_s(m, c), 25e6 / 1.5e-6);
  m.tensor_dense[2] = 1.0;  // FP16 tensor work without an FP16 tensor ceiling
  EXPECT_FALSE(mix_peak_flop_per_s(m, c).has_value());
}

// INT8 tensor ops are not FLOP, so a cuBLAS i8i32 GEMM (the recorded H100 one at n = 2048:
// 17.18e9 INT8 ops, a 138,240-FLOP FP32 epilogue, 15.09 MB of DRAM, 23.68 us) had an arithmetic
// intensity of 0.009 and was called memory bound at 19% of its roof, though its INT8 work alone
// takes 8.68 us at the 1,978.9 TOPS peak and its bytes 4.50 us at 3.35 TB/s (a review). Such a
// launch is placed by time: compute work at peak against bytes at the bandwidth.
TEST(Roof, Int8TensorOpsPlaceALaunchByTime) {
  DeviceCeilings c;
  c.fp32.value = 67e12;
  c.dram.value = 3.35e12;
  c.tensor[kTensorInt8].value = 1978.9e12;
  c.tensor[1].value = 494.7e12;  // tensor FLOP measured: a trace of the tensor set
  LaunchMetrics gemm = metrics(0, 138240, 0, 15.09e6);
  gemm.tensor_dense[kTensorInt8] = 17179869184.0;
  gemm.tensor_dense[1] = 0.0;
  const RoofCheck r = check_roof(gemm, uint64_t{23680}, c);
  EXPECT_TRUE(r.placed_by_time());
  EXPECT_STREQ(r.bound(), "compute");
  const double compute_s = 17179869184.0 / 1978.9e12 + 138240 / 67e12;
  EXPECT_NEAR(*r.roof_fraction(), compute_s / 23.68e-6, 1e-12);
  EXPECT_NEAR(*r.roof_fraction(), 0.3666, 1e-3);
  EXPECT_FALSE(r.above());

  LaunchMetrics quant = metrics(0, 0, 0, 1e9);  // a few INT8 ops, a gigabyte moved
  quant.tensor_dense[kTensorInt8] = 1e9;
  quant.tensor_dense[1] = 0.0;
  const RoofCheck q = check_roof(quant, uint64_t{1000000}, c);
  EXPECT_STREQ(q.bound(), "memory");
  EXPECT_NEAR(*q.roof_fraction(), (1e9 / 3.35e12) / 1e-3, 1e-12);

  LaunchMetrics fast = gemm;  // the same work in 4 us: faster than the INT8 peak allows
  const RoofCheck f = check_roof(fast, uint64_t{4000}, c);
  EXPECT_TRUE(f.above_compute);
  EXPECT_NEAR(f.excess, compute_s / 4e-6, 1e-9);
  EXPECT_STREQ(f.severity(), "error");

  // Sparse INT8 ops at twice the dense peak.
  LaunchMetrics sparse = metrics(0, 0, 0, 1e3);
  sparse.tensor_sparse[kTensorInt8] = 2 * 1978.9e12 * 1e-6;  // 1 us of work at the sparse peak
  EXPECT_NEAR(*check_roof(sparse, uint64_t{2000}, c).roof_fraction(), 0.5, 1e-9);

  // FLOP unknown (no FP32 count) beside INT8 ops: no bound, not a bound that counts them as 0.
  LaunchMetrics unknown = gemm;
  unknown.fp32_flop.reset();
  EXPECT_STREQ(check_roof(unknown, uint64_t{23680}, c).bound(), "");
  EXPECT_FALSE(check_roof(unknown, uint64_t{23680}, c).roof_fraction().has_value());
  EXPECT_TRUE(check_roof(unknown, uint64_t{4000}, c).above_compute);  // the INT8 work alone is too much

  c.tensor[kTensorInt8].value.reset();  // no INT8 ceiling: no bound, as for any missing ceiling
  const RoofCheck no_ceiling = check_roof(gemm, uint64_t{23680}, c);
  EXPECT_FALSE(no_ceiling.placed_by_time());
  EXPECT_STREQ(no_ceiling.bound(), "");
  EXPECT_FALSE(no_ceiling.roof_fraction().has_value());
}

TEST(Ceilings, MeasuredEntryIsComparedWithTheDatasheet) {
  testing::TempDir dir;
  auto file = dir.path / "rfbench.json";
  std::ofstream(file) << R"json({"devices": [{"name": "NVIDIA H100 80GB HBM3 (measured)", "measured": true,
      "patterns": ["^NVIDIA H100 80GB HBM3$"], "dram_bytes_per_s": 3.1e12, "fp32_flop_per_s": 40e12,
      "tensor_fp16_flop_per_s": 700e12, "l2_bytes_per_s": 9e12, "citation": "measured by rfbench"}]})json";
  CeilingDb user = CeilingDb::from_file(file);
  CeilingSources s{&CeilingDb::builtin(), &user, file.string(), std::nullopt};
  DeviceCeilings c = resolve_ceilings("NVIDIA H100 80GB HBM3", "GH100", 0, s);
  EXPECT_TRUE(c.dram.measured);
  EXPECT_EQ(c.dram.source, "measured: " + file.string() + " (measured by rfbench)");
  EXPECT_DOUBLE_EQ(*c.dram.ratio_to_datasheet(), 3.1 / 3.35);   // within 80-100 %
  EXPECT_DOUBLE_EQ(*c.fp32.ratio_to_datasheet(), 40.0 / 67.0);  // below 80 %: reported
  EXPECT_DOUBLE_EQ(*c.tensor[2].ratio_to_datasheet(), 700.0 / 989.4);
  EXPECT_EQ(c.l2_bandwidth.value, 9e12);
  EXPECT_FALSE(c.l2_bandwidth.ratio_to_datasheet());  // no datasheet value to compare with
  EXPECT_FALSE(c.fp64.measured);                      // not in the file: the datasheet's
  EXPECT_EQ(c.fp64.source.rfind("datasheet: H100 SXM5", 0), 0u);
}

}  // namespace
}  // namespace rf::analyzer
