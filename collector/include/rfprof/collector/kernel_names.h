// Kernel names as ncu's --kernel-name-base and --print-kernel-base read them, from a demangled
// name: pure string functions, shared by the collector's -k filter (launch_filter.h) and the ncu
// pages printed from traces (analyzer/ncu_csv.h). No CUPTI, no allocation beyond the result.
#pragma once

#include <regex>
#include <string>
#include <string_view>

namespace rf::collector {

/// The function name of a demangled kernel name: without return type, template arguments and
/// parameter list, namespaces kept ("void ns::gemm<float, 2>(float*)" -> "ns::gemm"). A name that
/// is not C++ ("sm90_xmma_gemm_..."): itself.
std::string function_name_of(std::string_view demangled);

/// function_name_of without its namespaces and classes: ncu's "function" name base
/// ("void at::native::(anonymous namespace)::k<4>(int)" -> "k").
std::string bare_function_name(std::string_view demangled);

/// Whether exact name `wanted` (-k NAME, base "function") names the kernel whose demangled name is
/// `demangled`: its function name with or without namespaces, or the whole demangled name.
bool function_name_matches(std::string_view demangled, std::string_view wanted);

/// Whether `re` (-k regex:EXPR, --kernel-id's regex:NAME) finds a match in the kernel's name as
/// --kernel-name-base `base` reads it: "mangled" the symbol `mangled`, "demangled" the whole
/// demangled name, "function" (ncu's default: "function name without parameters, templates etc.")
/// its function name with or without namespaces, as exact names are compared: `^gemm$` names
/// "void ns::gemm<float>(float*)", `float` does not. Each name is searched in its first
/// kMaxRegexSubject bytes (regex_subject.h).
bool regex_names_kernel(const std::regex& re, std::string_view base, std::string_view demangled,
                        std::string_view mangled);

}  // namespace rf::collector
