#include "VectorKernels.h"

// Each product is rounded before it is added, as in the portable kernels.
#pragma clang fp contract(off)

#if defined(__x86_64__)
#include <immintrin.h>

int vk_has_wide_vectors(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") ? 1 : 0;
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

__attribute__((target("avx"))) double vk_dot_lanes4_wide(
    const double *column, const double *vector, long count) {
  __m256d sums = _mm256_setzero_pd();
  long index = 0;
  for (; index + 4 <= count; index += 4) {
    sums = _mm256_add_pd(
        sums, _mm256_mul_pd(_mm256_loadu_pd(column + index), _mm256_loadu_pd(vector + index)));
  }
  double lanes[4];
  _mm256_storeu_pd(lanes, sums);
  for (; index < count; index++) lanes[0] += column[index] * vector[index];
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

/// pointer[3], pointer[2], pointer[1], pointer[0].
__attribute__((target("avx2"))) static inline __m256d vk_reversed(const double *pointer) {
  return _mm256_permute4x64_pd(_mm256_loadu_pd(pointer), 0x1B);
}

__attribute__((target("avx2"))) void vk_next_forward_wide(
    const double *forward, double error, double scale, long order, double *next) {
  next[0] = forward[0] * scale;
  const __m256d errors = _mm256_set1_pd(error);
  const __m256d scales = _mm256_set1_pd(scale);
  long index = 1;
  for (; index + 4 <= order; index += 4) {
    __m256d backward = vk_reversed(forward + (order - index - 3));
    __m256d here = _mm256_loadu_pd(forward + index);
    _mm256_storeu_pd(
        next + index, _mm256_mul_pd(_mm256_sub_pd(here, _mm256_mul_pd(errors, backward)), scales));
  }
  for (; index < order; index++) {
    next[index] = (forward[index] - error * forward[order - index]) * scale;
  }
  next[order] = -error * forward[0] * scale;
}

__attribute__((target("avx2"))) void vk_add_reversed_wide(
    const double *forward, double factor, long order, double *solution) {
  const __m256d factors = _mm256_set1_pd(factor);
  long index = 0;
  for (; index + 4 <= order + 1; index += 4) {
    __m256d backward = vk_reversed(forward + (order - index - 3));
    _mm256_storeu_pd(
        solution + index,
        _mm256_add_pd(_mm256_loadu_pd(solution + index), _mm256_mul_pd(factors, backward)));
  }
  for (; index <= order; index++) solution[index] += factor * forward[order - index];
}

/// The first filter's four weights `index` in the low half, the second's in the high.
__attribute__((target("avx"))) static inline __m256 vk_pair_weights(const float *weights, int index) {
  return _mm256_set_m128(_mm_loadu_ps(weights + 24 + 4 * index), _mm_loadu_ps(weights + 4 * index));
}

__attribute__((target("avx"))) void vk_four_step_recurse_pair_wide(
    const float *weights, float *first, float *second, long groups, float *state) {
  const __m256 w0 = vk_pair_weights(weights, 0), w1 = vk_pair_weights(weights, 1);
  const __m256 w2 = vk_pair_weights(weights, 2), w3 = vk_pair_weights(weights, 3);
  const __m256 from_last = vk_pair_weights(weights, 4);
  const __m256 from_second_last = vk_pair_weights(weights, 5);
  // The group before, its last two outputs in lanes 3 and 2 of each half.
  __m256 before = _mm256_set_ps(state[2], state[3], 0, 0, state[0], state[1], 0, 0);
  for (long group = 0; group < groups; group++) {
    __m256 f = _mm256_set_m128(_mm_loadu_ps(second + 4 * group), _mm_loadu_ps(first + 4 * group));
    __m256 given = _mm256_add_ps(
        _mm256_add_ps(
            _mm256_mul_ps(_mm256_permute_ps(f, 0x00), w0),
            _mm256_mul_ps(_mm256_permute_ps(f, 0x55), w1)),
        _mm256_add_ps(
            _mm256_mul_ps(_mm256_permute_ps(f, 0xAA), w2),
            _mm256_mul_ps(_mm256_permute_ps(f, 0xFF), w3)));
    __m256 carried = _mm256_add_ps(
        _mm256_mul_ps(_mm256_permute_ps(before, 0xFF), from_last),
        _mm256_mul_ps(_mm256_permute_ps(before, 0xAA), from_second_last));
    before = _mm256_add_ps(given, carried);
    _mm_storeu_ps(first + 4 * group, _mm256_castps256_ps128(before));
    _mm_storeu_ps(second + 4 * group, _mm256_extractf128_ps(before, 1));
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, before);
  state[0] = lanes[3];
  state[1] = lanes[2];
  state[2] = lanes[7];
  state[3] = lanes[6];
}

long vk_local_maxima(const double *power, long low, long high, long *bins) {
  long count = 0;
  long bin = low;
  // Two bins a step: both comparisons in one instruction each, the result
  // two bits, the bins written where the bits say (no branch on the powers).
  for (; bin + 1 <= high; bin += 2) {
    __m128d here = _mm_loadu_pd(power + bin);
    __m128d rises = _mm_cmpgt_pd(here, _mm_loadu_pd(power + bin - 1));
    __m128d holds = _mm_cmpge_pd(here, _mm_loadu_pd(power + bin + 1));
    int mask = _mm_movemask_pd(_mm_and_pd(rises, holds));
    bins[count] = bin;
    count += mask & 1;
    bins[count] = bin + 1;
    count += mask >> 1;
  }
  for (; bin <= high; bin++) {
    bins[count] = bin;
    count += (power[bin] > power[bin - 1]) & (power[bin] >= power[bin + 1]);
  }
  return count;
}

float vk_largest_magnitude(const float *values, long count) {
  // Two chains of maxima, so each waits on the one before it half as often.
  const __m128 signless = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
  __m128 first = _mm_setzero_ps();
  __m128 second = _mm_setzero_ps();
  long index = 0;
  for (; index + 8 <= count; index += 8) {
    // max(v, acc) keeps acc where v is NaN.
    first = _mm_max_ps(_mm_and_ps(_mm_loadu_ps(values + index), signless), first);
    second = _mm_max_ps(_mm_and_ps(_mm_loadu_ps(values + index + 4), signless), second);
  }
  float lanes[4];
  _mm_storeu_ps(lanes, _mm_max_ps(first, second));
  float largest = lanes[0];
  for (int lane = 1; lane < 4; lane++) largest = lanes[lane] > largest ? lanes[lane] : largest;
  for (; index < count; index++) {
    float size = __builtin_fabsf(values[index]);
    largest = size > largest ? size : largest;
  }
  return largest;
}

#else

int vk_has_wide_vectors(void) { return 0; }

long vk_local_maxima(const double *power, long low, long high, long *bins) {
  long count = 0;
  for (long bin = low; bin <= high; bin++) {
    bins[count] = bin;
    count += (power[bin] > power[bin - 1]) & (power[bin] >= power[bin + 1]);
  }
  return count;
}

float vk_largest_magnitude(const float *values, long count) {
  float largest = 0;
  for (long index = 0; index < count; index++) {
    float size = __builtin_fabsf(values[index]);
    largest = size > largest ? size : largest;
  }
  return largest;
}

double vk_dot_lanes4_wide(const double *column, const double *vector, long count) {
  (void)column;
  (void)vector;
  (void)count;
  return 0;
}

void vk_next_forward_wide(
    const double *forward, double error, double scale, long order, double *next) {
  (void)forward;
  (void)error;
  (void)scale;
  (void)order;
  (void)next;
}

void vk_add_reversed_wide(const double *forward, double factor, long order, double *solution) {
  (void)forward;
  (void)factor;
  (void)order;
  (void)solution;
}

void vk_four_step_recurse_pair_wide(
    const float *weights, float *first, float *second, long groups, float *state) {
  (void)weights;
  (void)first;
  (void)second;
  (void)groups;
  (void)state;
}

void vk_fir_dots4_wide(
    const float *taps, long count, const float *first, long step, float *outputs) {
  (void)taps;
  (void)count;
  (void)first;
  (void)step;
  (void)outputs;
}

#endif
