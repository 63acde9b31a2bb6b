// The session's launch callbacks allocate nothing after a thread's first launches, in timing mode
// (issue 8: "launch callbacks that do no allocation"): the real Session::on_callback, called as
// CUPTI calls it for a launch through the runtime (runtime entry, driver entry, driver exit,
// runtime exit), on the fake CUPTI. test_launch_alloc shows the same for LaunchLog and the writer
// alone; this one covers what the session adds around them, and found one allocation they
// missed: with no kernel record asked about (none here), a thread's decision ring fills after
// 4,096 launches and the thread applies it to the kernel-record filter itself, whose first
// interval allocated (now reserved: CorrelationFilter::kReservedIntervals). Global operator new
// is replaced here and counts, per thread, what the launching thread allocates while armed.
#include <cstdlib>
#include <new>

#include "fake_session.h"

namespace {

thread_local bool t_armed = false;
thread_local uint64_t t_allocations = 0;

void* counted(std::size_t n, std::size_t align) {
  if (t_armed) ++t_allocations;
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                               : std::malloc(n);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return counted(n, 0); }
void* operator new[](std::size_t n) { return counted(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

/// Calls the session's callback for `n` launches of `kernel` on `ctx` exactly as CUPTI would
/// (no fake work in between), correlation ids from `*next` on. Returns the allocations the
/// calling thread made during them when `armed`.
uint64_t launches(CUcontext ctx, const char* kernel, int n, uint32_t* next, bool armed) {
  const auto [fn, user] = subscriber();
  if (!fn) std::_Exit(5);
  cuLaunchKernel_params params{};
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = 128;
  params.blockDimY = params.blockDimZ = 1;
  CUresult ok = CUDA_SUCCESS;
  int rt_ok = 0;
  CUpti_CallbackData rt{}, dr{};
  rt.functionName = "cudaLaunchKernel";
  rt.functionReturnValue = &rt_ok;
  rt.symbolName = kernel;
  rt.context = ctx;
  rt.contextUid = 1;
  dr = rt;
  dr.functionName = "cuLaunchKernel";
  dr.functionParams = &params;
  dr.functionReturnValue = &ok;
  t_allocations = 0;
  t_armed = armed;
  for (int i = 0; i < n; ++i) {
    rt.correlationId = (*next)++;
    dr.correlationId = (*next)++;
    rt.callbackSite = dr.callbackSite = CUPTI_API_ENTER;
    fn(user, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &rt);
    fn(user, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &dr);
    rt.callbackSite = dr.callbackSite = CUPTI_API_EXIT;
    fn(user, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &dr);
    fn(user, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &rt);
  }
  t_armed = false;
  return t_allocations;
}

/// In the child: warms the thread up, then reports the allocations of 20,000 launches to stderr.
void count_allocations(CUcontext ctx) {
  uint32_t next = 1000;
  launches(ctx, "_Z4gemmPKfS0_Pf", 2000, &next, false);  // the thread's buffer, caches, name
  launches(ctx, "_Z4reluPf", 2000, &next, false);
  uint64_t n = launches(ctx, "_Z4gemmPKfS0_Pf", 10000, &next, true);
  n += launches(ctx, "_Z4reluPf", 10000, &next, true);
  std::fprintf(stderr, "allocations=%llu\n", static_cast<unsigned long long>(n));
}

TEST_F(FakeSessionTest, TimingModeLaunchCallbacksAllocateNothing) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    count_allocations(create_context(1));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("allocations=0\n"), std::string::npos) << c.err;
  // The 24,000 launches are in the trace: the arming did not skip the path it measures.
  EXPECT_EQ(read_trace(trace_).all<trace::LaunchApi>().size(), 24000u);
}

TEST_F(FakeSessionTest, TimingModeLaunchCallbacksWithFiltersAllocateNothing) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.filter.kernel_name = "regex:gemm|relu";
    o.filter.nvtx_include = {"forward/"};
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    nvtx_push("forward");
    count_allocations(ctx);
    nvtx_pop();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("allocations=0\n"), std::string::npos) << c.err;
  EXPECT_EQ(read_trace(trace_).all<trace::LaunchApi>().size(), 24000u);
}

}  // namespace
}  // namespace rf::fake_cupti
