// ncu CSV import (raw and details pages) (rfprof/analyzer/ncu_import.h).
#include "rfprof/analyzer/ncu_import.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "rfprof/analyzer/flops.h"

namespace rf::analyzer {
namespace {

constexpr size_t kIdentColumns = 11;  // "ID" .. "CC", without --nvtx's columns

/// Where the metrics start in a header `h` that ncu wrote: after "CC", 11 columns in, or more with
/// --nvtx, whose NVTX columns ("thread Domain:Push/Pop_Range:...", "Id:Domain:Start/Stop_Range:...")
/// come between "Host Name" and "Kernel Name". nullopt: not ncu's identifying columns.
std::optional<size_t> first_metric_column(const std::vector<std::string>& h) {
  static const char* const kBefore[] = {"ID", "Process ID", "Process Name", "Host Name"};
  static const char* const kAfter[] = {"Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"};
  if (h.size() < kIdentColumns) return std::nullopt;
  for (size_t i = 0; i < 4; ++i)
    if (h[i] != kBefore[i]) return std::nullopt;
  size_t kernel = 4;
  while (kernel < h.size() && h[kernel] != "Kernel Name") ++kernel;
  if (kernel + 7 > h.size()) return std::nullopt;
  for (size_t i = 0; i < 7; ++i)
    if (h[kernel + i] != kAfter[i]) return std::nullopt;
  return kernel + 7;
}

/// The 11 identifying fields of record `f` ("ID" .. "CC"), without --nvtx's columns.
std::vector<std::string> ident_fields(const std::vector<std::string>& f, size_t first_metric) {
  std::vector<std::string> ident(f.begin(), f.begin() + 4);
  ident.insert(ident.end(), f.begin() + static_cast<std::ptrdiff_t>(first_metric - 7),
               f.begin() + static_cast<std::ptrdiff_t>(first_metric));
  return ident;
}

[[noreturn]] void fail(const std::string& where, size_t column, const std::string& what) {
  throw NcuImportError(where + ":" + std::to_string(column) + ": " + what);
}

std::optional<uint32_t> uint_field(const std::string& s);
std::optional<std::string> c_locale_number(std::string_view s);

/// "(256, 1, 1)" or "(1,024, 1, 1)" (thousands separators) -> {256, 1, 1}; nullopt when it is
/// not that shape. The parts are separated by ", " (comma and space), separators have no space.
/// Throws NcuImportError naming `where` (FILE:LINE:COLUMN) for a whole part above INT32_MAX,
/// which no launch has (CUDA's largest grid dimension is 2^31 - 1) and int32_t cannot hold.
std::optional<std::array<int32_t, 3>> dims(const std::string& s, const std::string& where) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return std::nullopt;
  const std::string inner = s.substr(1, s.size() - 2);
  std::array<int32_t, 3> d{};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t sep = inner.find(", ", start);
    if ((i < 2) != (sep != std::string::npos)) return std::nullopt;
    const std::optional<std::string> t = c_locale_number(inner.substr(start, i < 2 ? sep - start : std::string::npos));
    if (!t || t->find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > std::numeric_limits<int32_t>::max()))
      throw NcuImportError(where + ": \"" + s + "\" has a part above 2,147,483,647 (INT32_MAX), which no launch has");
    if (ec != std::errc() || p != t->data() + t->size()) return std::nullopt;
    d[static_cast<size_t>(i)] = static_cast<int32_t>(v);
    start = sep + 2;
  }
  return d;
}

bool digit(char c) { return c >= '0' && c <= '9'; }

/// `s` without its thousands separators when it is a number as ncu writes it in the C locale:
/// [sign] digits, either plain or grouped "1,234,567" (',' before each group of three), then
/// optionally '.' and digits, then optionally an exponent ("1.5e3"); nullopt otherwise.
std::optional<std::string> c_locale_number(std::string_view s) {
  std::string out;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    if (s[i] == '-') out += '-';  // from_chars takes no '+'
    ++i;
  }
  const size_t first = i;
  while (i < s.size() && digit(s[i])) out += s[i++];
  if (i == first) return std::nullopt;
  if (i < s.size() && s[i] == ',') {
    if (i - first > 3) return std::nullopt;
    while (i < s.size() && s[i] == ',') {
      if (i + 4 > s.size() || !digit(s[i + 1]) || !digit(s[i + 2]) || !digit(s[i + 3])) return std::nullopt;
      out.append(s.substr(i + 1, 3));
      i += 4;
    }
    if (i < s.size() && digit(s[i])) return std::nullopt;  // a group of four or more digits
  }
  if (i < s.size() && s[i] == '.') {
    out += s[i++];
    const size_t decimals = i;
    while (i < s.size() && digit(s[i])) out += s[i++];
    if (i == decimals) return std::nullopt;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    out += s[i++];
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) out += s[i++];  // from_chars takes an exponent's '+'
    const size_t exponent = i;
    while (i < s.size() && digit(s[i])) out += s[i++];
    if (i == exponent) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  return out;
}

std::optional<uint32_t> uint_field(const std::string& s) {
  const std::optional<std::string> t = c_locale_number(s);
  if (!t) return std::nullopt;
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
  if (ec != std::errc() || p != t->data() + t->size()) return std::nullopt;
  return v;
}

}  // namespace

bool other_locale_number(std::string_view cell) {
  size_t i = 0;
  if (i < cell.size() && (cell[i] == '+' || cell[i] == '-')) ++i;
  const std::string_view s = cell.substr(i);
  if (s.empty() || !digit(s.front()) || c_locale_number(s)) return false;
  for (char c : s)
    if (!digit(c) && c != '.' && c != ',') return false;
  const size_t comma = s.rfind(',');
  const size_t dot = s.rfind('.');
  if (comma != std::string_view::npos)  // a decimal comma: once, after every '.', digits after it
    return s.find(',') == comma && (dot == std::string_view::npos || dot < comma) && comma + 1 < s.size();
  // '.' between groups: 1 to 3 digits, then two or more ".ddd"
  size_t lead = 0;
  while (lead < s.size() && digit(s[lead])) ++lead;
  if (lead == 0 || lead > 3) return false;
  size_t groups = 0;
  for (size_t j = lead; j < s.size(); j += 4, ++groups)
    if (s[j] != '.' || j + 4 > s.size() || !digit(s[j + 1]) || !digit(s[j + 2]) || !digit(s[j + 3])) return false;
  return groups >= 2;
}

std::vector<std::string> split_csv_record(std::string_view line, const std::string& where) {
  std::vector<std::string> out(1);
  size_t i = 0;
  while (i <= line.size()) {
    if (i < line.size() && line[i] == '"') {
      const size_t open = i++;
      for (;;) {
        if (i >= line.size()) fail(where, open + 1, "unterminated quoted field");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            out.back() += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        out.back() += line[i++];
      }
      if (i < line.size() && line[i] != ',') fail(where, i + 1, "text after a closing quote");
    } else {
      while (i < line.size() && line[i] != ',') out.back() += line[i++];
    }
    if (i >= line.size()) break;
    ++i;  // the comma
    out.emplace_back();
  }
  return out;
}

std::optional<double> ncu_unit_scale(const std::string& unit) {
  static const std::map<std::string, double> scale = {
      {"", 1},          {"byte", 1},       {"Kbyte", 1e3},    {"Mbyte", 1e6},   {"Gbyte", 1e9},
      {"Tbyte", 1e12},  {"nsecond", 1},    {"usecond", 1e3},  {"msecond", 1e6}, {"second", 1e9},
      {"ns", 1},        {"us", 1e3},       {"ms", 1e6},       {"s", 1e9},  // ncu 2025.3 (seen on an H100)
      {"inst", 1},      {"Kinst", 1e3},    {"Minst", 1e6},    {"Ginst", 1e9},   {"sector", 1},
      {"Ksector", 1e3}, {"Msector", 1e6},  {"cycle", 1},      {"Kcycle", 1e3},  {"Mcycle", 1e6},
      {"Gcycle", 1e9},  {"%", 1},          {"math_op", 1},    {"Kmath_op", 1e3}, {"Mmath_op", 1e6},
      {"Gmath_op", 1e9}};
  auto it = scale.find(unit);
  if (it == scale.end()) return std::nullopt;
  return it->second;
}

std::optional<double> ncu_cell_value(const std::string& cell, const std::string& unit, const std::string& where) {
  if (cell.empty() || cell == "n/a" || cell == "N/A") return std::nullopt;
  // inf and nan as from_chars reads them (a hostile file's; the callers judge the value).
  const std::string t = c_locale_number(cell).value_or(cell);
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || (std::isfinite(v) && !c_locale_number(cell)))
    throw NcuImportError(where + ": \"" + cell + "\" is not a number");
  const std::optional<double> scale = ncu_unit_scale(unit);
  if (!scale) throw NcuImportError(where + ": unit \"" + unit + "\" is not known (expected base or K/M/G units of byte, second, inst, sector, cycle)");
  return v * *scale;
}

namespace {

/// A duration of 2^53 ns (104 days) or more is refused: doubles hold every whole ns below it (the
/// sums of GPU time saturate at UINT64_MAX ns rather than wrap, rows.cpp).
constexpr double kMaxDurationNs = 9007199254740992.0;  // 2^53

/// Refuses gpu__time_duration.sum's value `ns` (from cell `cell`) when it is negative, infinite or
/// 2^53 ns or more; NaN (no value) passes. `where`: FILE:LINE:COLUMN.
void check_duration(double ns, const std::string& cell, const std::string& where) {
  if (!std::isnan(ns) && !(ns >= 0 && ns < kMaxDurationNs))
    throw NcuImportError(where + ": gpu__time_duration.sum \"" + cell +
                         "\" is not a duration (expected 0 to 2^53 ns, 9,007,199,254,740,992)");
}

/// The most bytes one CSV record may have, quoted newlines included: ncu's records are a few KB
/// (about 200 device__attribute_* columns); a longer one is a quote that never closes.
constexpr size_t kMaxRecordBytes = size_t{1} << 20;

/// What read_ncu_csv builds, launch by launch.
class ImportBuilder {
 public:
  explicit ImportBuilder(NcuImport& out) : out_(out) {}

  /// The metric names are known: the raw page's header, or all of the details page's rows.
  void set_metrics(std::vector<std::string> names) {
    out_.metric_names = std::move(names);
    layout_.emplace(out_.metric_names);
    time_col_.reset();
    name_col_.reset();
    attribute_cols_.clear();
    for (size_t i = 0; i < out_.metric_names.size(); ++i) {
      if (out_.metric_names[i] == metric::kGpuTime) time_col_ = i;
      if (out_.metric_names[i] == "device__attribute_display_name") name_col_ = i;
      for (const auto& a : kDeviceAttributes)
        if (out_.metric_names[i] == a.name) attribute_cols_.push_back({i, a.field});
    }
  }
  /// Whether a formula uses metric `i` (set_metrics first).
  bool uses(size_t i) const { return layout_->uses(i); }

  /// One launch: `ident`, the 11 fields "ID" .. "CC"; `values`, one per metric (NaN: none);
  /// `texts`, the metric cells as written (for the device's name). `where`: FILE:LINE;
  /// `first_metric`: the 0-based column after "CC" (a Block Size or Grid Size error's column).
  void add(const std::vector<std::string>& ident, std::vector<double> values,
           const std::vector<std::string>& texts, const std::string& where, size_t first_metric) {
    KernelRow r;
    auto id = uint_field(ident[0]);
    if (!id) throw NcuImportError(where + ":1: ID \"" + ident[0] + "\" is not a number");
    r.id = *id;
    r.pid = uint_field(ident[1]).value_or(0);
    r.kernel = ident[4];
    r.context = uint_field(ident[5]);
    r.stream = uint_field(ident[6]);
    // "Block Size" and "Grid Size" are the 4th and 3rd columns before the metrics (1-based: first_metric - 3, - 2).
    r.block = dims(ident[7], where + ":" + std::to_string(first_metric - 3));
    r.grid = dims(ident[8], where + ":" + std::to_string(first_metric - 2));
    r.device = uint_field(ident[9]);
    NcuImport::Process& p = process(r.pid, ident[2], ident[3]);
    if (r.device && !p.devices.count(*r.device)) {
      NcuImport::Device d;
      if (name_col_) d.name = texts[*name_col_];
      const std::string& cc = ident[10];  // "9.0"
      if (const size_t dot = cc.find('.'); dot != std::string::npos) {
        d.cc_major = static_cast<uint32_t>(uint_field(cc.substr(0, dot)).value_or(0));
        d.cc_minor = static_cast<uint32_t>(uint_field(cc.substr(dot + 1)).value_or(0));
      }
      for (const auto& [col, field] : attribute_cols_)  // the raw page's device__attribute_* columns
        if (const double v = values[col]; std::isfinite(v) && v >= 0 && v <= 4294967295.0)
          d.*field = static_cast<uint32_t>(v);
      p.devices.emplace(*r.device, std::move(d));
    }
    r.metrics = layout_->evaluate(values);
    // A duration was checked by check_duration (0 to 2^53 ns); NaN ("n/a", empty): untimed.
    if (time_col_) {
      const double t = values[*time_col_];
      if (std::isfinite(t) && t >= 0 && t < kMaxDurationNs) r.duration_ns = static_cast<uint64_t>(std::llround(t));
    }
    p.rows.push_back(out_.rows.size());
    out_.rows.push_back(std::move(r));
    out_.values.push_back(std::move(values));
  }

 private:
  /// The process of a row, added at its first row.
  NcuImport::Process& process(uint32_t pid, const std::string& name, const std::string& host) {
    auto [it, added] = process_index_.try_emplace(std::make_pair(pid, host), out_.processes.size());
    if (added) out_.processes.push_back(NcuImport::Process{pid, name, host, {}, {}});
    return out_.processes[it->second];
  }

  NcuImport& out_;
  std::map<std::pair<uint32_t, std::string>, size_t> process_index_;  // (pid, host) -> index
  std::optional<MetricLayout> layout_;
  std::optional<size_t> time_col_, name_col_;
  /// The device__attribute_* columns read into Device (cuDeviceGetAttribute's values, as ncu
  /// prints them: SMs, kHz, kHz, bits, bytes).
  struct DeviceAttribute {
    const char* name;
    uint32_t NcuImport::Device::*field;
  };
  static constexpr DeviceAttribute kDeviceAttributes[] = {
      {"device__attribute_multiprocessor_count", &NcuImport::Device::sm_count},
      {"device__attribute_clock_rate", &NcuImport::Device::core_clock_khz},
      {"device__attribute_memory_clock_rate", &NcuImport::Device::memory_clock_khz},
      {"device__attribute_global_memory_bus_width", &NcuImport::Device::memory_bus_width_bits},
      {"device__attribute_l2_cache_size", &NcuImport::Device::l2_cache_bytes}};
  std::vector<std::pair<size_t, uint32_t NcuImport::Device::*>> attribute_cols_;
};

/// One metric cell's value in base units (NaN: none): an error only for the metrics a formula
/// uses. ncu's raw page also holds text columns (device__attribute_display_name,
/// device__attribute_confidential_computing_mode "No-CC") and units such as "block" or
/// "register/thread".
double metric_value(const std::string& cell, const std::string& unit, bool used, const std::string& where) {
  try {
    if (auto v = ncu_cell_value(cell, unit, where)) return *v;
  } catch (const NcuImportError&) {
    if (used) throw;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

/// Refuses a cell written in another locale, used by a formula or not: the file's other numbers
/// would be read wrongly ("156.448" ns as 156.448).
void check_locale(const std::string& cell, const std::string& where) {
  if (other_locale_number(cell))
    throw NcuImportError(where + ": \"" + cell + "\" is a number in another locale's format than ncu's C locale (',' "
                         "between thousands, '.' before decimals), so this file's other numbers cannot be trusted either; "
                         "run ncu with LC_ALL=C");
}

/// Records the first metric a formula uses that ncu printed in a scaled unit (NcuImport::scaled_metric).
void note_scaled(NcuImport& out, const std::string& metric, const std::string& unit) {
  if (!out.scaled_metric.empty()) return;
  const std::optional<double> scale = ncu_unit_scale(unit);
  if (scale && *scale != 1) {
    out.scaled_metric = metric;
    out.scaled_unit = unit;
  }
}

/// A details-page launch: its identifying fields and its rows' metrics, as written.
struct DetailsLaunch {
  std::vector<std::string> ident;
  std::string where;
  struct Cell {
    std::string name, unit, value;
    size_t line = 0;  // the message's FILE:LINE:COLUMN is built only when a cell is read
  };
  std::vector<Cell> cells;
};

}  // namespace

namespace {

/// Reads one line, without its '\n' and a '\r' before it (CRLF), into `line`; false at the end of
/// the input. Past `limit` bytes the rest of the line is read but not kept, and `too_long` is set:
/// a 100 MB line takes no 100 MB.
bool read_line(std::istream& in, std::string& line, size_t limit, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* sb = in.rdbuf();
  bool any = false;
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      if (!any) in.setstate(std::ios::eofbit | std::ios::failbit);
      break;
    }
    any = true;
    if (c == '\n') break;
    if (line.size() < limit)
      line.push_back(static_cast<char>(c));
    else
      too_long = true;
  }
  if (!too_long && !line.empty() && line.back() == '\r') line.pop_back();
  return any;
}

}  // namespace

NcuImport read_ncu_csv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NcuImportError(path.string() + ":0:0: cannot be opened");
  NcuImport out;
  ImportBuilder builder(out);
  std::vector<std::string> units;  // raw page: per metric column
  std::string line;
  size_t lineno = 0;
  bool have_header = false;
  size_t fields = 0;  // per record, as in the header
  size_t first = kIdentColumns;  // the first metric column (after "CC")
  // Details page: columns of the metric's name, unit and value; its launches in file order.
  std::optional<size_t> name_at, unit_at, value_at;
  std::vector<DetailsLaunch> launches;
  std::set<std::string> ended;  // IDs of details launches before the current one
  std::set<std::string> ids;    // raw page: IDs of the records read
  size_t cells = 0;             // details rows read
  bool too_long = false;
  const auto record_too_long = [&](const std::string& where, size_t from, size_t to) {
    return NcuImportError(where + ":1: a record longer than " + std::to_string(kMaxRecordBytes) + " bytes" +
                          (from == to ? std::string() : " over lines " + std::to_string(from) + " to " + std::to_string(to)) +
                          " (a quoted field that never closes?)");
  };
  while (read_line(in, line, kMaxRecordBytes, too_long)) {
    const size_t record_line = ++lineno;  // a record's first line (a quoted field may hold newlines)
    const std::string where = path.string() + ":" + std::to_string(record_line);
    const bool record = have_header && !line.empty() && line[0] == '"';
    if (too_long) {  // application output (a progress bar's \r without \n) is skipped, a record refused
      if (record) throw record_too_long(where, record_line, lineno);
      continue;
    }
    // A record whose quote is still open at the line's end goes on on the next line (RFC 4180,
    // as rfprof's own pages quote a kernel name with a newline); only after the header and for a
    // line that starts as ncu's records do, so that application output cannot swallow records.
    // The quotes' parity is kept, not counted again over the joined record at every line.
    if (record) {
      bool open = std::count(line.begin(), line.end(), '"') % 2 == 1;
      for (std::string next; open;) {
        if (!read_line(in, next, kMaxRecordBytes, too_long)) break;  // split_csv_record names the field
        ++lineno;
        if (too_long || line.size() + 1 + next.size() > kMaxRecordBytes) throw record_too_long(where, record_line, lineno);
        line += '\n';
        line += next;
        open ^= (std::count(next.begin(), next.end(), '"') % 2) == 1;
      }
    }
    if (lineno == 1 && line.size() >= 2 && ((line[0] == '\xff' && line[1] == '\xfe') || (line[0] == '\xfe' && line[1] == '\xff')))
      throw NcuImportError(where + ":1: UTF-16 text (as PowerShell's > writes it); convert it to UTF-8 first, e.g. "
                           "iconv -f UTF-16 -t UTF-8");
    if (lineno == 1 && line.rfind("\xef\xbb\xbf", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    if (line.rfind("\"ID\",", 0) == 0) {
      if (have_header)
        throw NcuImportError(where + ":1: a second ncu header: the file holds more than one ncu run's CSV; give each "
                             "its own file");
      auto h = split_csv_record(line, where);
      const std::optional<size_t> metrics_at = first_metric_column(h);
      if (!metrics_at)
        throw NcuImportError(where + ":1: not ncu's raw or details page header (expected \"ID\",\"Process ID\","
                             "\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
                             "\"Grid Size\",\"Device\",\"CC\", then metrics or \"Section Name\",\"Metric Name\",...)");
      fields = h.size();
      first = *metrics_at;
      std::map<std::string, size_t> column_of;  // a metric named twice: which one would be read?
      for (size_t i = first; i < h.size(); ++i)
        if (auto [it, added] = column_of.emplace(h[i], i); !added)
          throw NcuImportError(where + ":" + std::to_string(i + 1) + ": column \"" + h[i] + "\" again (first column " +
                               std::to_string(it->second + 1) + "): each metric must have one column");
      for (size_t i = first; i < h.size(); ++i) {
        if (h[i] == "Metric Name") name_at = i;
        if (h[i] == "Metric Unit") unit_at = i;
        if (h[i] == "Metric Value") value_at = i;
      }
      if (!(name_at && unit_at && value_at)) {  // the raw page: a column per metric
        name_at = unit_at = value_at = std::nullopt;
        builder.set_metrics(std::vector<std::string>(h.begin() + static_cast<std::ptrdiff_t>(first), h.end()));
        units.assign(out.metric_names.size(), "");
      }
      have_header = true;
      continue;
    }
    if (!have_header) continue;                     // ==PROF== lines and application output before it
    if (line.empty() || line[0] != '"') {  // ==PROF== and application lines between records, but
      // not a record with its quotes lost (an editor's or a script's rewrite): ncu quotes every field.
      std::vector<std::string> unquoted;
      try {
        unquoted = split_csv_record(line, where);
      } catch (const NcuImportError&) {
      }
      // ncu's Block Size "(256, 1, 1)" and numbers "89,696" give more fields once unquoted.
      if (unquoted.size() >= fields && uint_field(unquoted[0]) && uint_field(unquoted[1]))
        throw NcuImportError(where + ":1: unquoted record (ncu quotes every field, \"" + unquoted[0] +
                             "\",...): a record rewritten by another tool? Export it again with ncu --csv");
      continue;
    }
    auto f = split_csv_record(line, where);
    if (f.size() != fields)
      throw NcuImportError(where + ":1: " + std::to_string(f.size()) + " fields, expected " + std::to_string(fields) +
                           " as in the header");
    std::vector<std::string> ident = ident_fields(f, first);
    if (value_at) {  // details page: a row per metric, a launch's rows together
      if (f[*name_at].empty()) continue;  // a rule's row (ncu's "Rule Name" columns)
      const std::string cell_where = where + ":" + std::to_string(*value_at + 1);
      check_locale(f[*value_at], cell_where);
      if (launches.empty() || launches.back().ident[0] != f[0]) {
        if (!launches.empty()) ended.insert(launches.back().ident[0]);
        if (ended.count(f[0]))
          throw NcuImportError(where + ":1: ID \"" + f[0] + "\" again, after other launches: a details page lists "
                               "each launch's rows together");
        launches.push_back(DetailsLaunch{std::move(ident), where, {}});
      }
      launches.back().cells.push_back({f[*name_at], f[*unit_at], f[*value_at], record_line});
      ++cells;
      continue;
    }
    if (f[0].empty()) {  // the units row
      units.assign(f.begin() + static_cast<std::ptrdiff_t>(first), f.end());
      for (size_t i = 0; i < units.size(); ++i)
        if (builder.uses(i)) note_scaled(out, out.metric_names[i], units[i]);
      continue;
    }
    if (!ids.insert(f[0]).second)
      throw NcuImportError(where + ":1: ID \"" + f[0] + "\" again: a raw page has one record per launch");
    const std::vector<std::string> texts(f.begin() + static_cast<std::ptrdiff_t>(first), f.end());
    std::vector<double> values(texts.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string cell_where = where + ":" + std::to_string(first + i + 1);
      check_locale(texts[i], cell_where);
      values[i] = metric_value(texts[i], units[i], builder.uses(i), cell_where);
      if (out.metric_names[i] == metric::kGpuTime) check_duration(values[i], texts[i], cell_where);
    }
    builder.add(ident, std::move(values), texts, where, first);
  }
  // ncu's roofline sections collect rates, not the counts the formulas sum: said, not silent.
  auto note_rates = [&out](const std::vector<std::string>& names) {
    const auto has = [&names](std::string_view n) { return std::find(names.begin(), names.end(), n) != names.end(); };
    for (std::string_view count : {metric::kFfma, metric::kFadd, metric::kFmul, metric::kDfma, metric::kHfma})
      if (const std::string rate = std::string(count) + ".per_cycle_elapsed"; has(rate) && !has(count)) {
        out.rate_metric = rate;
        return;
      }
    if (has("dram__bytes.sum.per_second") && !has(metric::kDramRead)) out.rate_metric = "dram__bytes.sum.per_second";
  };
  if (!have_header)
    throw NcuImportError(path.string() + ":" + std::to_string(lineno) + ":1: no ncu CSV header (a line starting with \"ID\"); "
                         "was it written with ncu --csv (--page raw or details)?");
  if (value_at) {  // the details page's metrics: every name its rows hold, in order of appearance
    std::vector<std::string> names;
    std::map<std::string, size_t, std::less<>> column;
    for (const auto& l : launches)
      for (const auto& c : l.cells)
        if (column.emplace(c.name, names.size()).second) names.push_back(c.name);
    // A launch's row has a value per metric: ncu gives every launch the same metrics (those of
    // --metrics, or of its sections), so the rows hold about as many values as the file does. A
    // file whose launches each name other metrics would need launches x metrics values: refused.
    if (!launches.empty() && names.size() > 64 && names.size() * launches.size() > 4 * cells + 1'000'000)
      throw NcuImportError(path.string() + ":" + std::to_string(lineno) + ":1: the details page's " +
                           std::to_string(launches.size()) + " launches name " + std::to_string(names.size()) +
                           " different metrics in only " + std::to_string(cells) +
                           " rows: not ncu's output (each launch lists the same metrics)");
    builder.set_metrics(names);
    note_rates(names);
    for (const auto& l : launches) {
      std::vector<double> values(names.size(), std::numeric_limits<double>::quiet_NaN());
      std::vector<std::string> texts(names.size());
      std::vector<bool> seen(names.size(), false);
      for (const auto& c : l.cells) {
        const size_t i = column.at(c.name);
        if (seen[i]) continue;  // the same metric in two sections: the first
        seen[i] = true;
        texts[i] = c.value;
        if (builder.uses(i)) note_scaled(out, c.name, c.unit);
        const std::string cell_where =
            path.string() + ":" + std::to_string(c.line) + ":" + std::to_string(*value_at + 1);
        values[i] = metric_value(c.value, c.unit, builder.uses(i), cell_where);
        if (c.name == metric::kGpuTime) check_duration(values[i], c.value, cell_where);
      }
      builder.add(l.ident, std::move(values), texts, l.where, first);
    }
  }
  if (!value_at) note_rates(out.metric_names);
  out.no_used_metric = !out.metric_names.empty() && out.rate_metric.empty();
  for (size_t i = 0; i < out.metric_names.size() && out.no_used_metric; ++i)
    if (builder.uses(i)) out.no_used_metric = false;
  return out;
}

}  // namespace rf::analyzer
