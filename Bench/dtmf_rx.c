/*
 * dtmf_rx: decode the DTMF digits in an 8 kHz WAV file with spandsp's
 * receiver at its default settings, one "DTMF: X" line per digit (the same
 * form multimon-ng prints), so the benchmark scores both alike.
 *
 * Build: cc -O2 -o dtmf_rx dtmf_rx.c $(pkg-config --cflags --libs spandsp sndfile)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sndfile.h>
#include <spandsp.h>

static void on_digits(void *user_data, const char *digits, int len) {
    (void) user_data;
    for (int i = 0; i < len; i++)
        printf("DTMF: %c\n", digits[i]);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: dtmf_rx FILE.wav (8000 Hz mono)\n");
        return 64;
    }
    SF_INFO info = {0};
    SNDFILE *file = sf_open(argv[1], SFM_READ, &info);
    if (file == NULL) {
        fprintf(stderr, "dtmf_rx: %s: %s\n", argv[1], sf_strerror(NULL));
        return 1;
    }
    if (info.samplerate != 8000 || info.channels != 1) {
        fprintf(stderr, "dtmf_rx: %s: needs 8000 Hz mono, has %d Hz, %d channels\n", argv[1],
                info.samplerate, info.channels);
        return 1;
    }
    dtmf_rx_state_t *receiver = dtmf_rx_init(NULL, on_digits, NULL);
    int16_t block[1024];
    sf_count_t got;
    while ((got = sf_read_short(file, block, 1024)) > 0)
        dtmf_rx(receiver, block, (int) got);
    dtmf_rx_free(receiver);
    sf_close(file);
    return 0;
}
