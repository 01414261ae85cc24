/* Integrated loudness, loudness range and true peak of an audio file with
 * libebur128 itself (read by libsndfile), for the loudness benchmark.
 * Build: cc -O2 -o ebur128_scan ebur128_scan.c $(pkg-config --cflags --libs libebur128 sndfile) -lm */
#include <ebur128.h>
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 64;
  }
  SF_INFO info = {0};
  SNDFILE *file = sf_open(argv[1], SFM_READ, &info);
  if (!file) {
    fprintf(stderr, "%s: %s\n", argv[1], sf_strerror(NULL));
    return 66;
  }
  ebur128_state *state = ebur128_init((unsigned)info.channels, (unsigned long)info.samplerate,
                                      EBUR128_MODE_I | EBUR128_MODE_LRA | EBUR128_MODE_TRUE_PEAK);
  enum { FRAMES = 16384 };
  float *buffer = malloc(sizeof(float) * FRAMES * (size_t)info.channels);
  sf_count_t got;
  while ((got = sf_readf_float(file, buffer, FRAMES)) > 0) {
    ebur128_add_frames_float(state, buffer, (size_t)got);
  }
  double integrated, range, peak = 0;
  ebur128_loudness_global(state, &integrated);
  ebur128_loudness_range(state, &range);
  for (int channel = 0; channel < info.channels; channel++) {
    double value;
    ebur128_true_peak(state, (unsigned)channel, &value);
    if (value > peak) peak = value;
  }
  printf("{\"integrated_lufs\":%.2f,\"loudness_range_lu\":%.2f,\"true_peak_dbtp\":%.2f}\n",
         integrated, range, 20 * log10(peak));
  free(buffer);
  ebur128_destroy(&state);
  sf_close(file);
  return 0;
}
