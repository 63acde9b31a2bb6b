// One --nvtx-include / --nvtx-exclude rule in Nsight Compute's syntax (ncu's "NVTX Filtering":
// NsightComputeCli, "Quantifier" tables), parsed and matched against NVTX push/pop stacks.
// CUPTI-free; the NVTX state the rules are asked about is NvtxState (launch_filter.h).
#pragma once

#include <cstdint>
#include <memory>
#include <regex>
#include <stdexcept>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rf::collector {

class NvtxState;

/// A bad filter (an invalid regular expression or NVTX rule); what() names it and says why.
class FilterError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// One range of a push/pop stack as NvtxState keeps it: its name, and which of the rules'
/// regular expressions were found in it, searched once when it was pushed (bit i: slot i).
struct NvtxStackEntry {
  std::string name;
  uint64_t regex_matches = 0;
};

/// A domain or range name of a rule: literal text, or in a `regex:` rule an ECMAScript regular
/// expression searched in the name (as -k regex: searches kernel names).
struct NvtxName {
  std::string text;                          ///< the name, or the expression
  std::shared_ptr<const std::regex> regex;   ///< set in a regex: rule
  /// A regex's slot in NvtxState (NvtxState::watch_regex, 0..63): pushed ranges carry whether
  /// it matched them, so a launch tests a bit instead of searching. -1: searched when asked.
  int slot = -1;
  /// A start/end rule's name: the index of the counter of (the rule's domain, this name) in
  /// NvtxState (NvtxState::watch), read at a launch without a lookup. -1: looked up when asked.
  int watched = -1;
  /// Whether `name` is this name (literal: equal; regex: the expression found in it).
  bool matches(std::string_view name) const;
  /// The same for a pushed range: a regex with a slot reads the range's bit (no search).
  bool matches(const NvtxStackEntry& range) const;
  bool literal() const noexcept { return !regex; }
};

/// One element of a push/pop pattern: a range name, `*` (zero or more ranges) or `+` (exactly one).
struct NvtxElement {
  enum class Kind : uint8_t { kName, kAny, kOne };
  Kind kind = Kind::kName;
  NvtxName name;  ///< kName only
};

/// One rule, in ncu's syntax:
///   push/pop (a `/`, `[` or `]` makes a rule push/pop), on the launching thread's stack:
///     A/            range A open          A/B        B directly inside A
///     A/*/B         zero or more between  A/+/B      exactly one range between
///     [A            A at the bottom       B]         B at the top (both: [A/*/B])
///   start/end (no `/`, `[`, `]`), process-wide: A (A open), A,B (A and B both open)
///   DOMAIN@RULE     a named NVTX domain (without it the default domain); one domain per rule
///   regex:RULE      domain and names are regular expressions; `/[` at the start and `/]` at the
///                   end of the range part stand for a `[` or `]` of the expression, not an anchor;
///                   `]` anchors only as the last character (`regex:R[0-9]/`: no anchor)
///   \X              X taken as part of a name (`A\/B` is the range "A/B"); in a regex: rule,
///                   `\X` other than `\@`, `\,`, `\/` reaches the expression as it is (`\.`)
/// Outside regex: rules a trailing `/` after `]` is accepted too (`[A/*/B]/`).
struct NvtxRule {
  NvtxName domain;                   ///< text "" = the default domain
  bool push_pop = false;
  /// push/pop: the pattern, outermost first; start/end: the names, all of which must be open
  /// (kind kName only).
  std::vector<NvtxElement> pattern;
  bool bottom = false, top = false;  ///< `[` / `]` anchors (push/pop)

  /// Parses `text`. Throws FilterError naming the rule and what is wrong: empty, an empty domain
  /// or name, two domains, `*` or `+` not between two names, `,` in a push/pop rule, `*`/`+` in a
  /// start/end rule, or an invalid regular expression.
  static NvtxRule parse(std::string_view text);
  /// Whether the rule holds for a launch by `thread` in `state`.
  bool matches(const NvtxState& state, uint64_t thread) const;
};

/// True when push/pop `pattern` matches `stack` (outermost first): `bottom` anchors the
/// pattern's first element at the stack's bottom, `top` its last at the top; unanchored, the
/// pattern may start at any depth and end below the top. No allocation.
bool stack_matches(const std::vector<NvtxElement>& pattern, bool bottom, bool top,
                   const std::vector<std::string>& stack);
/// The same on a stack as NvtxState keeps it (outermost first; regex slots read from the entries).
bool stack_matches(const std::vector<NvtxElement>& pattern, bool bottom, bool top,
                   std::span<const NvtxStackEntry> stack);

}  // namespace rf::collector
