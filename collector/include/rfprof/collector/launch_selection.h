// ncu's launch counting options: --kernel-id, --filter-mode and --launch-skip-before-match, with
// -s/-c counted as --filter-mode says. Used by the collector at the launch API's entry (inside a
// profiling window, after --devices, -k and the NVTX rules) and by `rfprof -i` on a trace's
// launches. CUPTI-free: the caller gives each launch's identity (CountedLaunch).
//
// Source: the Nsight Compute CLI guide ("Profile" options, v2026.1) and its Training page
// ("Filter Options"); docs/ncu-flags.md says where they disagree and which reading rfprof takes.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rfprof/collector/nvtx_rule.h"  // FilterError

namespace rf::collector {

/// ncu's --filter-mode: what -s/-c (and --kernel-id's invocation number) count separately.
enum class FilterMode {
  kGlobal,          ///< all launches together (ncu's default)
  kPerGpu,          ///< each CUDA device separately
  kPerLaunchConfig  ///< each kernel with each grid, block and dynamic shared memory size separately
};

/// "global", "per-gpu" or "per-launch-config" (ncu's spelling); nullopt for anything else.
std::optional<FilterMode> parse_filter_mode(std::string_view text);
/// The mode as ncu spells it.
std::string_view filter_mode_name(FilterMode mode) noexcept;

/// ncu's --kernel-id `CONTEXT:STREAM:[regex:]NAME:INVOCATION`; an empty field matches anything.
/// CONTEXT and STREAM: a decimal CUPTI context / stream id (as `rfprof -i` prints them), or a
/// regular expression matched against the whole decimal id ("1|5"; ncu would also match NVTX
/// names of contexts and streams, which rfprof does not record). NAME: as -k, an exact name under
/// --kernel-name-base, or after "regex:" an expression searched in it; NAME may contain ':'
/// (C++ namespaces): INVOCATION is what follows the last ':'. INVOCATION: the 1-based number of
/// the launch among the launches of the same kernel that match CONTEXT, STREAM and NAME and that
/// the other filters (--devices, -k, NVTX rules) select; counted per context when CONTEXT is
/// given and per stream when STREAM is (ncu's "1|5:2::7": the seventh launch in context 1 on
/// stream 2, and the seventh in context 5 on stream 2), per device with --filter-mode per-gpu,
/// per grid, block and shared memory with per-launch-config. Or a regular expression matched
/// against that whole decimal number (".*5|3": the third, and every number ending in 5).
struct KernelId {
  std::string context;     ///< "" (any), or a number or expression on the decimal context id
  std::string stream;      ///< "" (any), or a number or expression on the decimal stream id
  std::string kernel_name; ///< "" (any), an exact name, or "regex:EXPR" (the -k syntax)
  std::string invocation;  ///< "" (every), or a number or expression on the 1-based invocation

  /// Parses the flag's value. Throws FilterError naming `text` and what was expected: fewer than
  /// four ':'-separated fields, an invalid regular expression in any field, or an INVOCATION that
  /// matches none of the numbers 1 to 1000 nor the first 1000 of any longer decimal length ("0",
  /// "foo": a NAME with ':' whose INVOCATION was left out, such as "::ns::foo").
  static KernelId parse(std::string_view text);
};

/// What the launch counting needs to know of one launch.
struct CountedLaunch {
  uint32_t context_id = 0;             ///< CUPTI context id (cuptiGetContextId; callback contextUid)
  uint32_t stream_id = 0;              ///< CUPTI stream id (needed when KernelId::stream is set)
  std::optional<uint32_t> device;      ///< CUDA device ordinal (per-gpu; nullopt: unknown)
  std::string_view kernel;             ///< the kernel's identity: its mangled symbol ("" graph launch)
  std::array<int32_t, 3> grid{};       ///< blocks (x, y, z)
  std::array<int32_t, 3> block{};      ///< threads (x, y, z)
  uint32_t shared_bytes = 0;           ///< dynamic shared memory (bytes)
  /// Whether KernelId::kernel_name names this kernel, matched by the caller as it matches -k
  /// (launch_filter.h in the collector, the trace's names in rfprof -i). True without a kernel id.
  bool kernel_id_name_matches = true;
};

/// The counting options of one process (or one `rfprof -i` print).
struct LaunchSelectionOptions {
  FilterMode mode = FilterMode::kGlobal;
  std::optional<KernelId> kernel_id;       ///< --kernel-id (nullopt: none)
  uint64_t skip_before_match = 0;          ///< --launch-skip-before-match: launches skipped first
  uint64_t launch_skip = 0;                ///< -s, counted as `mode` says
  std::optional<uint64_t> launch_count;    ///< -c, counted as `mode` says (nullopt: no limit)

  /// True when these options need LaunchSelection (-s/-c alone are LaunchLog's).
  bool needs_selection() const noexcept {
    return mode != FilterMode::kGlobal || kernel_id.has_value() || skip_before_match > 0;
  }
};

/// Decides, launch by launch in launch order, which launches the counting options select.
/// Thread-safe. Memory: one counter per distinct key counted (kernel, and device or launch
/// configuration as the mode says); a launch that needs a keyed counter takes one of kShards
/// locks, chosen by the key's hash, and allocates only the first time its key is seen.
class LaunchSelection {
 public:
  /// Locks the keyed counters are spread over.
  static constexpr size_t kShards = 16;

  /// Throws FilterError for an invalid regular expression in the kernel id.
  explicit LaunchSelection(LaunchSelectionOptions options);
  ~LaunchSelection();
  LaunchSelection(const LaunchSelection&) = delete;
  LaunchSelection& operator=(const LaunchSelection&) = delete;

  /// True when admit() reads CountedLaunch::stream_id (the caller may skip asking CUPTI).
  bool needs_stream_id() const noexcept;
  /// True when admit() reads CountedLaunch::device.
  bool needs_device() const noexcept { return options_.mode == FilterMode::kPerGpu; }
  /// The options given at construction.
  const LaunchSelectionOptions& options() const noexcept { return options_; }

  /// A CONTEXT, STREAM or INVOCATION field of a kernel id, compiled (launch_selection.cpp).
  struct IdField;

  /// One launch inside a profiling window. `filtered_in`: the other filters (--devices, -k, the
  /// NVTX rules) select it. In order: the first skip_before_match launches (selected or not) are
  /// refused; then a launch the filters or the kernel id refuse; then -s/-c, counted per mode.
  /// May throw std::bad_alloc the first time a key is seen.
  bool admit(const CountedLaunch& launch, bool filtered_in);

 private:
  struct Shards;
  /// The next 0-based ordinal of `launch` in `table` (kind 0: invocations, 1: -s/-c).
  uint64_t next_ordinal(int kind, const CountedLaunch& launch);
  bool kernel_id_matches(const CountedLaunch& launch) const;

  LaunchSelectionOptions options_;
  std::unique_ptr<IdField> context_, stream_, invocation_;  // set with a kernel id
  std::atomic<uint64_t> all_{0};      // launches seen (--launch-skip-before-match)
  std::atomic<uint64_t> global_{0};   // -s/-c ordinal in global mode
  std::unique_ptr<Shards> shards_;
};

}  // namespace rf::collector
