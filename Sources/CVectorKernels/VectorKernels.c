#include "VectorKernels.h"

// Each product is rounded before it is added, as in the portable kernels.
#pragma clang fp contract(off)

#if defined(__x86_64__)
#include <immintrin.h>

int vk_has_wide_vectors(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") ? 1 : 0;
}

/// The eight lanes of `sum` added as the portable kernel adds them.
__attribute__((target("avx"))) static inline float vk_total(__m256 sum) {
  __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  float lanes[4];
  _mm_storeu_ps(lanes, half);
  return (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
}

__attribute__((target("avx"))) void vk_fir_dots4_wide(
    const float *taps, long count, const float *first, long step, float *outputs) {
  __m256 sum0 = _mm256_setzero_ps();
  __m256 sum1 = _mm256_setzero_ps();
  __m256 sum2 = _mm256_setzero_ps();
  __m256 sum3 = _mm256_setzero_ps();
  const float *second = first + step;
  const float *third = second + step;
  const float *fourth = third + step;
  for (long index = 0; index < count; index += 8) {
    __m256 tap = _mm256_loadu_ps(taps + index);
    sum0 = _mm256_add_ps(sum0, _mm256_mul_ps(tap, _mm256_loadu_ps(first + index)));
    sum1 = _mm256_add_ps(sum1, _mm256_mul_ps(tap, _mm256_loadu_ps(second + index)));
    sum2 = _mm256_add_ps(sum2, _mm256_mul_ps(tap, _mm256_loadu_ps(third + index)));
    sum3 = _mm256_add_ps(sum3, _mm256_mul_ps(tap, _mm256_loadu_ps(fourth + index)));
  }
  outputs[0] = vk_total(sum0);
  outputs[1] = vk_total(sum1);
  outputs[2] = vk_total(sum2);
  outputs[3] = vk_total(sum3);
}

#else

int vk_has_wide_vectors(void) { return 0; }

void vk_fir_dots4_wide(
    const float *taps, long count, const float *first, long step, float *outputs) {
  (void)taps;
  (void)count;
  (void)first;
  (void)step;
  (void)outputs;
}

#endif
