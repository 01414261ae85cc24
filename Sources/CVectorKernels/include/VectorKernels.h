#ifndef MICLOOP_VECTOR_KERNELS_H
#define MICLOOP_VECTOR_KERNELS_H

/// Inner loops written with vector instructions: most for wider vectors
/// than the baseline build uses, chosen at run time by what the processor
/// offers; some in baseline instructions, where the compiler would take a
/// Swift loop lane by lane. Each gives, bit for bit, what its portable
/// Swift counterpart gives: the same operations in the same order on each
/// lane, only more lanes per instruction (no fused multiply-add). Any
/// thread; nothing allocates.

/// Whether the processor runs the 256-bit kernels below (AVX and AVX2).
int vk_has_wide_vectors(void);

/// Four outputs of a FIR filter of `count` taps (a multiple of 8): the
/// windows of `count` samples at `first` and at the next three `step`
/// samples apart, each summed in eight lanes (lane i takes taps i, i + 8,
/// ...), the lanes added as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
/// Only where `vk_has_wide_vectors` says so.
void vk_fir_dots4_wide(
    const float *taps, long count, const float *first, long step, float *outputs);

/// Σ column[i] · vector[i] over i < count, in four lanes (lane i mod 4;
/// the last count mod 4 terms added to lane 0 one at a time), the lanes
/// added as (l0 + l1) + (l2 + l3). Only where `vk_has_wide_vectors` says so.
double vk_dot_lanes4_wide(const double *column, const double *vector, long count);

/// Levinson's next forward vector: next[0] = forward[0] · scale,
/// next[i] = (forward[i] − error · forward[order − i]) · scale for
/// 0 < i < order, next[order] = ((−error) · forward[0]) · scale. Only where
/// `vk_has_wide_vectors` says so.
void vk_next_forward_wide(
    const double *forward, double error, double scale, long order, double *next);

/// solution[i] += factor · forward[order − i] for i in 0...order. Only where
/// `vk_has_wide_vectors` says so.
void vk_add_reversed_wide(const double *forward, double factor, long order, double *solution);

/// The recursions of two four-step biquads (the speech-band filter's), one
/// channel in each half of a 256-bit vector: for each of `groups` groups
/// of four feed-forward values in `first` and `second`, in place, the four
/// outputs (f0·w0 + f1·w1) + (f2·w2 + f3·w3) + (y−1·l + y−2·s). `weights`
/// holds each filter's w0…w3, l and s (4 floats each; the first filter's
/// 24, then the second's); `state` the outputs before the first group
/// (y−1, y−2 of the first, then of the second), updated. Only where
/// `vk_has_wide_vectors` says so.
void vk_four_step_recurse_pair_wide(
    const float *weights, float *first, float *second, long groups, float *state);

/// Writes to `bins`, in order, every bin from `low` to `high` whose
/// `power` exceeds the one below and is at least the one above (NaN never
/// is); returns how many. Reads power[low − 1] to power[high + 1].
/// Baseline instructions: every processor.
long vk_local_maxima(const double *power, long low, long high, long *bins);

/// The largest |values[i]| over i < count (0 when count is 0); NaN is
/// passed over. Baseline instructions: every processor, no check needed.
float vk_largest_magnitude(const float *values, long count);

#endif
