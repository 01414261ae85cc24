#ifndef MICLOOP_VECTOR_KERNELS_H
#define MICLOOP_VECTOR_KERNELS_H

/// Inner loops written for wider vectors than the baseline build uses,
/// chosen at run time by what the processor offers. Each gives, bit for
/// bit, what its portable Swift counterpart gives: the same operations in
/// the same order on each lane, only more lanes per instruction (no fused
/// multiply-add). Any thread; nothing allocates.

/// Whether the processor runs the 256-bit kernels below (AVX).
int vk_has_wide_vectors(void);

/// Four outputs of a FIR filter of `count` taps (a multiple of 8): the
/// windows of `count` samples at `first` and at the next three `step`
/// samples apart, each summed in eight lanes (lane i takes taps i, i + 8,
/// ...), the lanes added as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
/// Only where `vk_has_wide_vectors` says so.
void vk_fir_dots4_wide(
    const float *taps, long count, const float *first, long step, float *outputs);

#endif
