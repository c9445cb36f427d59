// Host shim for minispore's generated CUDA C (tests only; see tests/gpu/cuda_host.py).
// Compiles the generated kernels as ordinary C++: __global__/__device__ vanish, the CUDA math
// names are <cmath>'s, the generator's 16-bit float conversions (ms_h2f/ms_f2h, which are PTX
// cvt instructions on the device) are software conversions with round-to-nearest-even, the bit
// casts (__uint_as_float...) are memcpy, and a launch runs the grid's blocks one after another
// with the block's
// threads as real threads: threadIdx/blockIdx are thread_local, __shared__ arrays are statics
// (blocks never overlap), and __syncthreads() is a barrier, so a kernel's phases really run in
// lockstep, as on the device.
#pragma once
#define MS_HOST_SHIM 1
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static

struct ms_dim3 { unsigned x, y, z; };
static thread_local ms_dim3 threadIdx, blockIdx;
static ms_dim3 blockDim, gridDim;
static pthread_barrier_t ms_barrier;
#define __syncthreads() pthread_barrier_wait(&ms_barrier)

using std::isnan;

static inline float ms_bits_to_float(uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }
static inline uint32_t ms_float_to_bits(float f) { uint32_t b; std::memcpy(&b, &f, 4); return b; }

struct __half { uint16_t x; };
struct __nv_bfloat16 { uint16_t x; };

static inline float __half2float(__half h) {
  uint32_t s = (uint32_t)(h.x & 0x8000) << 16, e = (h.x >> 10) & 0x1f, m = h.x & 0x3ff;
  if (e == 0x1f) return ms_bits_to_float(s | 0x7f800000 | (m << 13));
  if (e == 0) {                                   // subnormal or zero
    float f = std::ldexp((float)m, -24);
    return s ? -f : f;
  }
  return ms_bits_to_float(s | ((e + 112) << 23) | (m << 13));
}

static inline __half __float2half_rn(float f) {
  uint32_t b = ms_float_to_bits(f), s = (b >> 16) & 0x8000;
  float a = std::fabs(f);
  __half h;
  if (std::isnan(f)) { h.x = (uint16_t)(s | 0x7e00); return h; }
  if (a >= 65520.f) { h.x = (uint16_t)(s | 0x7c00); return h; }        // rounds to inf
  if (a < 6.103515625e-05f) {                     // subnormal half: quantum 2^-24, RNE by rint
    h.x = (uint16_t)(s | (uint32_t)std::nearbyint(std::ldexp(a, 24)));
    return h;
  }
  uint32_t ab = b & 0x7fffffff;
  uint32_t e = (ab >> 23) - 112, m = ab & 0x7fffff;
  uint32_t r = (e << 10) | (m >> 13), rest = m & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (r & 1))) r += 1;   // carries into the exponent
  h.x = (uint16_t)(s | r);
  return h;
}

static inline float __uint_as_float(uint32_t b) { return ms_bits_to_float(b); }
static inline uint32_t __float_as_uint(float f) { return ms_float_to_bits(f); }
static inline float ms_h2f(uint16_t h) { return __half2float(__half{h}); }
static inline uint16_t ms_f2h(float f) { return __float2half_rn(f).x; }

static inline float __bfloat162float(__nv_bfloat16 h) { return ms_bits_to_float((uint32_t)h.x << 16); }

static inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t b = ms_float_to_bits(f);
  __nv_bfloat16 h;
  if (std::isnan(f)) { h.x = (uint16_t)((b >> 16) | 0x40); return h; }
  b += 0x7fff + ((b >> 16) & 1);
  h.x = (uint16_t)(b >> 16);
  return h;
}

// Run `kernel` over grid x block: blocks in order; each block's threads concurrently.
static inline void ms_launch(unsigned grid, unsigned block, const std::function<void()>& kernel) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  if (block == 1) {
    threadIdx = {0, 0, 0};
    for (unsigned b = 0; b < grid; ++b) { blockIdx = {b, 0, 0}; kernel(); }
    return;
  }
  pthread_barrier_init(&ms_barrier, nullptr, block);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < block; ++t)
    threads.emplace_back([&, t] {
      threadIdx = {t, 0, 0};
      for (unsigned b = 0; b < grid; ++b) {
        blockIdx = {b, 0, 0};
        kernel();
        pthread_barrier_wait(&ms_barrier);         // the next block reuses the statics
      }
    });
  for (auto& th : threads) th.join();
  pthread_barrier_destroy(&ms_barrier);
}
