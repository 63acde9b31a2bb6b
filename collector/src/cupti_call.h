// The CUPTI seam: the two ways project code calls CUPTI. Only collector/src includes this file.
//   RF_CUPTI_CALL(expr)  propagating: throws rf::collector::CuptiError on failure.
//   RF_CUPTI_TRY(expr)   noexcept: evaluates to true on success; on failure writes one
//                        "rfprof: <call> failed: <CUPTI message>" line to stderr (once per call
//                        site) and evaluates to false. Use it where the application must go on.
#pragma once

#include <cupti.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace rf::collector {

/// A failed CUPTI call. result() is the CUptiResult; what() names the call and CUPTI's message.
class CuptiError : public std::runtime_error {
 public:
  CuptiError(CUptiResult result, const char* call, const char* file, int line);
  CUptiResult result() const noexcept { return result_; }

 private:
  CUptiResult result_;
};

/// CUPTI's text for `result` ("CUPTI_ERROR_..." when CUPTI has none). Never throws.
std::string cupti_result_string(CUptiResult result) noexcept;

/// Writes "rfprof: <call> failed at <file>:<line>: <message>" to stderr unless `once` is already
/// set. Never throws, never allocates on failure paths beyond the message.
void report_cupti_failure(CUptiResult result, const char* call, const char* file, int line,
                          std::atomic<bool>& once) noexcept;

}  // namespace rf::collector

#define RF_CUPTI_CALL(expr)                                                      \
  do {                                                                           \
    CUptiResult rf_cupti_result_ = (expr);                                       \
    if (rf_cupti_result_ != CUPTI_SUCCESS)                                       \
      throw ::rf::collector::CuptiError(rf_cupti_result_, #expr, __FILE__, __LINE__); \
  } while (0)

#define RF_CUPTI_TRY(expr)                                                         \
  ([&]() noexcept -> bool {                                                        \
    CUptiResult rf_cupti_result_ = (expr);                                         \
    if (rf_cupti_result_ == CUPTI_SUCCESS) return true;                            \
    static std::atomic<bool> rf_cupti_once_{false};                                \
    ::rf::collector::report_cupti_failure(rf_cupti_result_, #expr, __FILE__, __LINE__, \
                                          rf_cupti_once_);                         \
    return false;                                                                  \
  }())
