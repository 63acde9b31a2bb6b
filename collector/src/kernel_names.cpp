// Kernel names for -k and --print-kernel-base (rfprof/collector/kernel_names.h).
#include "rfprof/collector/kernel_names.h"

#include "rfprof/collector/regex_subject.h"

namespace rf::collector {

std::string function_name_of(std::string_view d) {
  static constexpr std::string_view kAnon = "(anonymous namespace)";
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const char c = d[i];
    if (d.substr(i, kAnon.size()) == kAnon) {  // a namespace, not a parameter list
      if (depth == 0) out += kAnon;
      i += kAnon.size() - 1;
    } else if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      if (c == '(') break;  // the parameter list
      if (c == ' ') {
        out.clear();  // what came before was the return type
        continue;
      }
      out += c;
    }
  }
  return out;
}

bool function_name_matches(std::string_view demangled_name, std::string_view wanted) {
  if (demangled_name == wanted) return true;
  const std::string f = function_name_of(demangled_name);
  if (f == wanted) return true;
  const size_t colons = f.rfind("::");  // without namespaces, as bare_function_name
  return colons != std::string::npos && std::string_view(f).substr(colons + 2) == wanted;
}

std::string bare_function_name(std::string_view demangled) {
  std::string f = function_name_of(demangled);
  const size_t colons = f.rfind("::");
  if (colons != std::string::npos) f.erase(0, colons + 2);
  return f;
}

bool regex_names_kernel(const std::regex& re, std::string_view base, std::string_view demangled,
                        std::string_view mangled) {
  const auto finds = [&re](std::string_view name) {
    const std::string_view subject = regex_subject(name);
    return std::regex_search(subject.begin(), subject.end(), re);
  };
  if (base == "mangled") return finds(mangled);
  if (base == "demangled") return finds(demangled);
  const std::string function = function_name_of(demangled);
  if (finds(function)) return true;
  const std::string bare = bare_function_name(demangled);
  return bare != function && finds(bare);
}

}  // namespace rf::collector
