#include <alsa/asoundlib.h>
#include <sys/eventfd.h>

/* alsa-lib prints its own diagnostics to stderr; micloop reports every
   failure itself, in one line, so those are silenced. */
static void micloop_alsa_quiet_handler(const char *file, int line, const char *function, int err,
                                       const char *format, ...) {}

static inline void micloop_silence_alsa_diagnostics(void) {
  snd_lib_error_set_handler(micloop_alsa_quiet_handler);
}
