// NVTX rules in ncu's syntax (rfprof/collector/nvtx_rule.h).
#include "rfprof/collector/nvtx_rule.h"

#include <optional>
#include <string_view>

#include "rfprof/collector/launch_filter.h"
#include "rfprof/collector/regex_subject.h"

namespace rf::collector {
namespace {

/// One character of a rule after its escapes are read: `escaped` characters are never syntax;
/// `backslash` ones were written `\X`.
struct Char {
  char c;
  bool escaped;
  bool backslash;
};
using Chars = std::vector<Char>;

bool is(const Char& ch, char c) { return !ch.escaped && ch.c == c; }

[[noreturn]] void bad_rule(std::string_view text, const std::string& why) {
  throw FilterError("NVTX rule \"" + std::string(text) + "\": " + why);
}

/// Splits `chars` at every unescaped `sep`.
std::vector<Chars> split(const Chars& chars, char sep) {
  std::vector<Chars> parts(1);
  for (const Char& ch : chars) {
    if (is(ch, sep))
      parts.emplace_back();
    else
      parts.back().push_back(ch);
  }
  return parts;
}

/// The name `chars` spell. In a regex: rule an escaped character other than @ , / keeps its
/// backslash, so that the expression sees `\.` or `\[`.
NvtxName name_of(std::string_view text, const Chars& chars, bool regex, const char* what) {
  NvtxName n;
  for (const Char& ch : chars) {
    if (regex && ch.backslash && ch.c != '@' && ch.c != ',' && ch.c != '/') n.text += '\\';
    n.text += ch.c;
  }
  if (regex) {
    try {
      n.regex = std::make_shared<const std::regex>(n.text, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      bad_rule(text, std::string(what) + " \"" + n.text + "\" is not a valid regular expression (" + e.what() + ")");
    }
  }
  return n;
}

/// Does `pattern[p..]` match `stack[s..]`, to the end of the stack when `to_top`, else ending
/// anywhere? `*` spans any number of ranges (none included), `+` exactly one.
template <class Entry>
bool match_from(const std::vector<NvtxElement>& pattern, size_t p, std::span<const Entry> stack, size_t s,
                bool to_top) {
  if (p == pattern.size()) return !to_top || s == stack.size();
  const NvtxElement& e = pattern[p];
  switch (e.kind) {
    case NvtxElement::Kind::kAny:
      for (size_t k = s; k <= stack.size(); ++k)
        if (match_from(pattern, p + 1, stack, k, to_top)) return true;
      return false;
    case NvtxElement::Kind::kOne:
      return s < stack.size() && match_from(pattern, p + 1, stack, s + 1, to_top);
    case NvtxElement::Kind::kName:
      break;
  }
  return s < stack.size() && e.name.matches(stack[s]) && match_from(pattern, p + 1, stack, s + 1, to_top);
}

}  // namespace

bool NvtxName::matches(std::string_view name) const {
  if (!regex) return name == text;
  const std::string_view subject = regex_subject(name);  // regex_subject.h: a bound on the stack
  return std::regex_search(subject.begin(), subject.end(), *regex);
}

bool NvtxName::matches(const NvtxStackEntry& range) const {
  if (slot >= 0) return (range.regex_matches >> slot) & 1u;
  return matches(range.name);
}

namespace {

template <class Entry>
bool stack_matches_any_start(const std::vector<NvtxElement>& pattern, bool bottom, bool top,
                             std::span<const Entry> stack) {
  // An unanchored bottom: the pattern may start at any depth; an unanchored top: it may end below
  // the top (match_from with `to_top` false accepts leftover stack entries).
  for (size_t start = 0; start <= (bottom ? 0 : stack.size()); ++start)
    if (match_from(pattern, 0, stack, start, top)) return true;
  return false;
}

}  // namespace

bool stack_matches(const std::vector<NvtxElement>& pattern, bool bottom, bool top,
                   const std::vector<std::string>& stack) {
  return stack_matches_any_start(pattern, bottom, top, std::span<const std::string>(stack));
}

bool stack_matches(const std::vector<NvtxElement>& pattern, bool bottom, bool top,
                   std::span<const NvtxStackEntry> stack) {
  return stack_matches_any_start(pattern, bottom, top, stack);
}

NvtxRule NvtxRule::parse(std::string_view text) {
  NvtxRule r;
  std::string_view body = text;
  const bool regex = body.starts_with("regex:");
  if (regex) body.remove_prefix(6);
  Chars chars;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\') {
      if (i + 1 == body.size()) bad_rule(text, "ends with a lone '\\' (it escapes the character after it)");
      chars.push_back({body[++i], true, true});
    } else {
      chars.push_back({body[i], false, false});
    }
  }
  std::vector<Chars> at = split(chars, '@');
  if (at.size() > 2) bad_rule(text, "more than one '@': one rule names one domain (write \\@ for an '@' in a name)");
  Chars range = at.back();
  if (at.size() == 2) {
    if (at[0].empty()) bad_rule(text, "an empty domain before '@'");
    r.domain = name_of(text, at[0], regex, "domain");
  }
  if (range.empty()) bad_rule(text, "no range name");

  // Anchors and the push/pop marks, from the outside in.
  bool slash_mark = false;
  if (regex && range.size() >= 2 && is(range[0], '/') && is(range[1], '[')) {
    range.erase(range.begin());  // "/[": the expression's '[', not the bottom anchor
    range.front().escaped = true;
  } else if (is(range.front(), '[')) {
    r.bottom = true;
    range.erase(range.begin());
  }
  if (regex) {
    // ncu: a ']' is the top anchor only as the range part's last character; "/]" there is the
    // expression's ']'; a trailing '/' marks a push/pop rule ("Range[0-9]/": no anchor).
    if (range.size() >= 2 && is(range[range.size() - 2], '/') && is(range.back(), ']')) {
      range.erase(range.end() - 2);
      range.back().escaped = true;
    } else if (is(range.back(), ']')) {
      r.top = true;
      range.pop_back();
    } else if (is(range.back(), '/')) {
      slash_mark = true;
      range.pop_back();
    }
  } else {
    if (!range.empty() && is(range.back(), '/')) {
      slash_mark = true;
      range.pop_back();
    }
    if (!range.empty() && is(range.back(), ']')) {  // "B]" and also "B]/"
      r.top = true;
      range.pop_back();
    }
  }
  bool inner_slash = false;
  for (const Char& ch : range) inner_slash = inner_slash || is(ch, '/');
  r.push_pop = r.bottom || r.top || slash_mark || inner_slash;
  if (range.empty()) bad_rule(text, "no range name");

  auto quantifier = [](const Chars& part) -> std::optional<NvtxElement::Kind> {
    if (part.size() == 1 && is(part[0], '*')) return NvtxElement::Kind::kAny;
    if (part.size() == 1 && is(part[0], '+')) return NvtxElement::Kind::kOne;
    return std::nullopt;
  };
  if (r.push_pop) {
    for (const Char& ch : range)
      if (is(ch, ',')) bad_rule(text, "',' joins start/end ranges and cannot appear in a push/pop rule (write \\,)");
    const std::vector<Chars> parts = split(range, '/');
    for (size_t i = 0; i < parts.size(); ++i) {
      NvtxElement e;
      if (auto q = quantifier(parts[i])) {
        if (i == 0 || i + 1 == parts.size())
          bad_rule(text, "'*' and '+' stand between two range names (A/*/B, A/+/B)");
        e.kind = *q;
      } else {
        if (parts[i].empty()) bad_rule(text, "an empty range name between slashes");
        e.name = name_of(text, parts[i], regex, "range name");
      }
      r.pattern.push_back(std::move(e));
    }
  } else {
    for (const Chars& part : split(range, ',')) {
      if (part.empty()) bad_rule(text, "an empty range name between commas");
      if (quantifier(part))
        bad_rule(text, "'*' and '+' belong in push/pop rules (A/*/B); a start/end rule lists names: A,B");
      r.pattern.push_back({NvtxElement::Kind::kName, name_of(text, part, regex, "range name")});
    }
  }
  return r;
}

bool NvtxRule::matches(const NvtxState& state, uint64_t thread) const {
  if (push_pop) return state.stack_matches(thread, domain, pattern, bottom, top);
  for (const NvtxElement& e : pattern)
    if (!state.start_end_open(domain, e.name)) return false;
  return true;
}

}  // namespace rf::collector
