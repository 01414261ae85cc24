/* JACK's declarations (libjack-jackd2-dev) and a table of its functions,
   filled with dlsym from libjack.so.0 at run time: micloop never links
   libjack, so it starts and runs ALSA commands where JACK is not installed.
   Nothing here calls libjack directly; every call goes through the table. */
#include <dlfcn.h>
#include <stddef.h>
#include <jack/jack.h>

#define MICLOOP_JACK_FUNCTIONS(X)                                                         \
  X(jack_client_open) X(jack_client_close) X(jack_get_client_name) X(jack_activate)       \
  X(jack_deactivate) X(jack_is_realtime) X(jack_set_process_callback)                    \
  X(jack_set_xrun_callback) X(jack_on_info_shutdown) X(jack_set_buffer_size_callback)    \
  X(jack_set_sample_rate_callback) X(jack_get_sample_rate) X(jack_get_buffer_size)       \
  X(jack_port_register) X(jack_port_get_buffer) X(jack_port_name) X(jack_port_by_name)   \
  X(jack_port_flags) X(jack_port_type) X(jack_port_get_latency_range)                    \
  X(jack_get_ports) X(jack_connect) X(jack_free) X(jack_last_frame_time)                 \
  X(jack_frames_to_time) X(jack_set_error_function) X(jack_set_info_function)            \
  X(jack_set_port_connect_callback) X(jack_set_port_registration_callback)               \
  X(jack_port_by_id) X(jack_port_is_mine) X(jack_port_short_name)

/* One pointer per function, named as the function. */
struct micloop_jack {
#define MICLOOP_JACK_POINTER(name) __typeof__(name) *_Nonnull name;
  MICLOOP_JACK_FUNCTIONS(MICLOOP_JACK_POINTER)
#undef MICLOOP_JACK_POINTER
};

/* Fills `api` from an open libjack; returns NULL, or the name of the first
   function the library lacks. */
static inline const char *micloop_jack_resolve(struct micloop_jack *api, void *library) {
#define MICLOOP_JACK_RESOLVE(name)                              \
  api->name = (__typeof__(name) *)dlsym(library, #name);       \
  if (api->name == NULL) return #name;
  MICLOOP_JACK_FUNCTIONS(MICLOOP_JACK_RESOLVE)
#undef MICLOOP_JACK_RESOLVE
  return NULL;
}

/* libjack prints its own diagnostics ("Cannot connect to server socket"
   …); micloop reports every failure itself, in one line. */
static void micloop_jack_quiet(const char *message) { (void)message; }

static inline void micloop_jack_silence(const struct micloop_jack *api) {
  api->jack_set_error_function(micloop_jack_quiet);
  api->jack_set_info_function(micloop_jack_quiet);
}

/* jack_client_open is variadic: never start a server; connect to `server`,
   or, when NULL, to JACK_DEFAULT_SERVER as every JACK client does. */
static inline jack_client_t *micloop_jack_open(const struct micloop_jack *api, const char *name,
                                               const char *server, jack_status_t *status) {
  if (server == NULL) return api->jack_client_open(name, JackNoStartServer, status);
  return api->jack_client_open(name, JackNoStartServer | JackServerName, status, server);
}

static inline const char *micloop_jack_audio_type(void) { return JACK_DEFAULT_AUDIO_TYPE; }
