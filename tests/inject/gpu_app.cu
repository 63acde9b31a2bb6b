// A CUDA program with analytically known launches for the GPU test of librfinject
// (test_inject_gpu.cpp). Run with RFPROF_PROFILE_FROM_START=off:
//   outside:  before_window<<<>>>                      (must not be collected)
//   window 1: NVTX push "step"
//             scale<<<g, 128>>> for g = 1..5          (5 launches, n = g*128 FFMAs each)
//             a CUDA graph of 2 scale kernels, launched once
//             scale<<<7, 128>>>                       (n = 896 FFMAs)
//             NVTX pop
//   outside:  after_window<<<>>>                       (must not be collected)
// `gpu_app steps N` instead runs N windows of 5 scale kernels each (see steps()); `gpu_app
// steps-threads N` launches two of the five from a second thread (see steps_threads()), `gpu_app
// steps-stop-thread N` stops each window from a second thread (steps_stop_thread()); `gpu_app
// idle-kill MS` launches five kernels, waits MS ms launching nothing and SIGKILLs itself; `gpu_app
// reset-loop N` launches one kernel then destroys the context (cudaDeviceReset), N times.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

__global__ void before_window(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void after_window(float* x) { x[threadIdx.x] -= 1.0f; }

// One FFMA per element: x = a * x + b.
__global__ void scale(float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t e = (call);                                                      \
    if (e != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));     \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

// `gpu_app steps N`: N "training steps", each its own cudaProfilerStart/Stop window launching
// scale<<<g, 128>>> for g = 1..5 (replay across steps: one pass per window).
int steps(float* x, int n) {
  for (int i = 0; i < n; ++i) {
    CHECK(cudaProfilerStart());
    for (int g = 1; g <= 5; ++g) scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaProfilerStop());
  }
  CHECK(cudaFree(x));
  std::printf("gpu_app steps done\n");
  return 0;
}

// `gpu_app steps-warm N`: scale<<<1, 128>>> once before the first window (a training loop's
// warm-up steps load and run every kernel before profiling starts), then `steps N`.
int steps_warm(float* x, int n) {
  scale<<<1, 128>>>(x, 1.5f, 0.5f, 128);
  CHECK(cudaDeviceSynchronize());
  return steps(x, n);
}

// `gpu_app steps-threads N`: as `steps N`, but in each window scale<<<4, 128>>> and
// scale<<<5, 128>>> are launched from a second thread, joined inside the window (PyTorch launches
// its backward kernels from the autograd thread). Replay across steps must count them too.
int steps_threads(float* x, int n) {
  for (int i = 0; i < n; ++i) {
    CHECK(cudaProfilerStart());
    for (int g = 1; g <= 3; ++g) scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);
    cudaError_t other = cudaSuccess;
    std::thread t([&] {
      for (int g = 4; g <= 5; ++g) scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);
      other = cudaDeviceSynchronize();
    });
    t.join();
    CHECK(other);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaProfilerStop());
  }
  CHECK(cudaFree(x));
  std::printf("gpu_app steps-threads done\n");
  return 0;
}

// `gpu_app steps-stop-thread N`: as `steps N`, but each window's cudaProfilerStop is called from
// a second thread (a training loop whose steps end on another thread, or an NVTX start/end range
// ended there). The session then stops the pass and decodes from that thread, with the step's
// context pushed on it: whether CUPTI's user replay accepts Stop and DecodeData there is for a GPU
// to tell.
int steps_stop_thread(float* x, int n) {
  for (int i = 0; i < n; ++i) {
    CHECK(cudaProfilerStart());
    for (int g = 1; g <= 5; ++g) scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);
    CHECK(cudaDeviceSynchronize());
    cudaError_t stopped = cudaSuccess;
    std::thread t([&] { stopped = cudaProfilerStop(); });
    t.join();
    CHECK(stopped);
  }
  CHECK(cudaFree(x));
  std::printf("gpu_app steps-stop-thread done\n");
  return 0;
}

// `gpu_app idle-kill MS` (profile from start): scale<<<g, 128>>> for g = 1..5, then MS ms without a
// launch (a checkpoint, evaluation on the CPU), then SIGKILL (the OOM killer). The counters of the
// five launches must be in the trace already: no later launch decodes their image.
int idle_kill(float* x, int ms) {
  for (int g = 1; g <= 5; ++g) scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);
  CHECK(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  std::raise(SIGKILL);
  return 1;
}

// `gpu_app reset-loop N`: N times scale<<<g, 128>>> (g = 1 + i % 5), a pause of about one flush
// interval, cudaDeviceReset. With RFPROF_FLUSH_MS=1 the flush thread decodes the context's image
// while its destruction begins: neither may wait for the other for good.
int reset_loop(float* x, int n) {
  for (int i = 0; i < n; ++i) {
    const int g = 1 + i % 5;
    scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);
    CHECK(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::microseconds(500 * (i % 4)));
    CHECK(cudaDeviceReset());
    CHECK(cudaMalloc(&x, 8 * 128 * sizeof(float)));
    CHECK(cudaMemset(x, 0, 8 * 128 * sizeof(float)));
  }
  CHECK(cudaFree(x));
  std::printf("gpu_app reset-loop done\n");
  return 0;
}

int main(int argc, char** argv) {
  const int kMax = 8 * 128;
  float* x = nullptr;
  CHECK(cudaMalloc(&x, kMax * sizeof(float)));
  CHECK(cudaMemset(x, 0, kMax * sizeof(float)));
  if (argc == 3 && std::string(argv[1]) == "steps") return steps(x, std::atoi(argv[2]));
  if (argc == 3 && std::string(argv[1]) == "steps-warm") return steps_warm(x, std::atoi(argv[2]));
  if (argc == 3 && std::string(argv[1]) == "steps-threads") return steps_threads(x, std::atoi(argv[2]));
  if (argc == 3 && std::string(argv[1]) == "steps-stop-thread") return steps_stop_thread(x, std::atoi(argv[2]));
  if (argc == 3 && std::string(argv[1]) == "idle-kill") return idle_kill(x, std::atoi(argv[2]));
  if (argc == 3 && std::string(argv[1]) == "reset-loop") return reset_loop(x, std::atoi(argv[2]));
  before_window<<<1, 32>>>(x);
  CHECK(cudaDeviceSynchronize());

  CHECK(cudaProfilerStart());
  nvtxRangePushA("step");
  for (int g = 1; g <= 5; ++g) scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);

  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scale<<<2, 128, 0, s>>>(x, 2.0f, 1.0f, 256);
  scale<<<3, 128, 0, s>>>(x, 2.0f, 1.0f, 384);
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));

  scale<<<7, 128>>>(x, 1.0f, 1.0f, 7 * 128);
  CHECK(cudaDeviceSynchronize());
  nvtxRangePop();
  CHECK(cudaProfilerStop());

  after_window<<<1, 32>>>(x);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(x));
  std::printf("gpu_app done\n");
  return 0;
}
