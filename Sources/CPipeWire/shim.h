/* PipeWire's client API as libpipewire-0.3.so.0 exports it (0.3.65, Debian 12,
   and later), declared here and reached through a table of functions filled
   with dlsym at run time: micloop never links libpipewire. SPA's headers
   (libspa-0.2-dev) are header-only and give the shared types; the few
   PipeWire methods that are inline calls through an interface (core,
   registry, metadata) are the inline functions at the end, which call
   through the interface's own method table. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <spa/utils/defs.h>
#include <spa/utils/dict.h>
#include <spa/utils/hook.h>
#include <spa/node/io.h>
#include <spa/param/latency-utils.h>

struct pw_thread_loop;
struct pw_loop;
struct pw_context;
struct pw_core;
struct pw_properties;
struct pw_filter;
struct pw_registry;
struct pw_proxy;
struct pw_metadata;
struct pw_buffer;
struct pw_core_info;
struct spa_command;
struct spa_pod;

/* enum pw_filter_state */
#define MICLOOP_PW_FILTER_STATE_ERROR (-1)
#define MICLOOP_PW_FILTER_STATE_UNCONNECTED 0
#define MICLOOP_PW_FILTER_STATE_CONNECTING 1
#define MICLOOP_PW_FILTER_STATE_PAUSED 2
#define MICLOOP_PW_FILTER_STATE_STREAMING 3
/* enum pw_filter_flags, enum pw_filter_port_flags */
#define MICLOOP_PW_FILTER_FLAG_RT_PROCESS 4u
#define MICLOOP_PW_FILTER_FLAG_CUSTOM_LATENCY 8u
#define MICLOOP_PW_FILTER_PORT_FLAG_MAP_BUFFERS 1u
#define MICLOOP_PW_ID_CORE 0u

/* struct pw_filter_events, version 1 */
struct micloop_pw_filter_events {
  uint32_t version;
  void (*destroy)(void *data);
  void (*state_changed)(void *data, int old, int state, const char *error);
  void (*io_changed)(void *data, void *port_data, uint32_t id, void *area, uint32_t size);
  void (*param_changed)(void *data, void *port_data, uint32_t id, const struct spa_pod *param);
  void (*add_buffer)(void *data, void *port_data, struct pw_buffer *buffer);
  void (*remove_buffer)(void *data, void *port_data, struct pw_buffer *buffer);
  void (*process)(void *data, struct spa_io_position *position);
  void (*drained)(void *data);
  void (*command)(void *data, const struct spa_command *command);
};

/* struct pw_core_events, version 0 */
struct micloop_pw_core_events {
  uint32_t version;
  void (*info)(void *data, const struct pw_core_info *info);
  void (*done)(void *data, uint32_t id, int seq);
  void (*ping)(void *data, uint32_t id, int seq);
  void (*error)(void *data, uint32_t id, int seq, int res, const char *message);
  void (*remove_id)(void *data, uint32_t id);
  void (*bound_id)(void *data, uint32_t id, uint32_t global_id);
  void (*add_mem)(void *data, uint32_t id, uint32_t type, int fd, uint32_t flags);
  void (*remove_mem)(void *data, uint32_t id);
};

/* struct pw_core_methods, version 0 */
struct micloop_pw_core_methods {
  uint32_t version;
  int (*add_listener)(void *object, struct spa_hook *listener,
                      const struct micloop_pw_core_events *events, void *data);
  int (*hello)(void *object, uint32_t version);
  int (*sync)(void *object, uint32_t id, int seq);
  int (*pong)(void *object, uint32_t id, int seq);
  int (*error)(void *object, uint32_t id, int seq, int res, const char *message);
  struct pw_registry *(*get_registry)(void *object, uint32_t version, size_t user_data_size);
  void *(*create_object)(void *object, const char *factory_name, const char *type,
                         uint32_t version, const struct spa_dict *props, size_t user_data_size);
  int (*destroy)(void *object, void *proxy);
};

/* struct pw_registry_events and _methods, version 0 */
struct micloop_pw_registry_events {
  uint32_t version;
  void (*global)(void *data, uint32_t id, uint32_t permissions, const char *type,
                 uint32_t version, const struct spa_dict *props);
  void (*global_remove)(void *data, uint32_t id);
};

struct micloop_pw_registry_methods {
  uint32_t version;
  int (*add_listener)(void *object, struct spa_hook *listener,
                      const struct micloop_pw_registry_events *events, void *data);
  void *(*bind)(void *object, uint32_t id, const char *type, uint32_t version,
                size_t user_data_size);
  int (*destroy)(void *object, uint32_t id);
};

/* struct pw_metadata_events and _methods, version 0 */
struct micloop_pw_metadata_events {
  uint32_t version;
  int (*property)(void *data, uint32_t subject, const char *key, const char *type,
                  const char *value);
};

struct micloop_pw_metadata_methods {
  uint32_t version;
  int (*add_listener)(void *object, struct spa_hook *listener,
                      const struct micloop_pw_metadata_events *events, void *data);
  int (*set_property)(void *object, uint32_t subject, const char *key, const char *type,
                      const char *value);
  int (*clear)(void *object);
};

/* The exported functions micloop uses, as X(field, symbol, return, arguments). */
#define MICLOOP_PW_FUNCTIONS(X)                                                              \
  X(initialize, pw_init, void, (int *argc, char ***argv))                                    \
  X(get_library_version, pw_get_library_version, const char *, (void))                       \
  X(log_set_level, pw_log_set_level, void, (int level))                                      \
  X(thread_loop_new, pw_thread_loop_new, struct pw_thread_loop *,                            \
    (const char *name, const struct spa_dict *props))                                        \
  X(thread_loop_destroy, pw_thread_loop_destroy, void, (struct pw_thread_loop *loop))        \
  X(thread_loop_start, pw_thread_loop_start, int, (struct pw_thread_loop *loop))             \
  X(thread_loop_stop, pw_thread_loop_stop, void, (struct pw_thread_loop *loop))              \
  X(thread_loop_lock, pw_thread_loop_lock, void, (struct pw_thread_loop *loop))              \
  X(thread_loop_unlock, pw_thread_loop_unlock, void, (struct pw_thread_loop *loop))          \
  X(thread_loop_signal, pw_thread_loop_signal, void,                                         \
    (struct pw_thread_loop *loop, bool wait_for_accept))                                     \
  X(thread_loop_timed_wait, pw_thread_loop_timed_wait, int,                                  \
    (struct pw_thread_loop *loop, int wait_max_sec))                                         \
  X(thread_loop_get_loop, pw_thread_loop_get_loop, struct pw_loop *,                         \
    (struct pw_thread_loop *loop))                                                           \
  X(context_new, pw_context_new, struct pw_context *,                                        \
    (struct pw_loop *loop, struct pw_properties *props, size_t user_data_size))              \
  X(context_destroy, pw_context_destroy, void, (struct pw_context *context))                 \
  X(context_connect, pw_context_connect, struct pw_core *,                                   \
    (struct pw_context *context, struct pw_properties *props, size_t user_data_size))        \
  X(core_disconnect, pw_core_disconnect, int, (struct pw_core *core))                        \
  X(properties_new_dict, pw_properties_new_dict, struct pw_properties *,                     \
    (const struct spa_dict *dict))                                                           \
  X(properties_set, pw_properties_set, int,                                                  \
    (struct pw_properties *props, const char *key, const char *value))                       \
  X(filter_new, pw_filter_new, struct pw_filter *,                                           \
    (struct pw_core *core, const char *name, struct pw_properties *props))                   \
  X(filter_destroy, pw_filter_destroy, void, (struct pw_filter *filter))                     \
  X(filter_add_listener, pw_filter_add_listener, void,                                       \
    (struct pw_filter *filter, struct spa_hook *listener,                                    \
     const struct micloop_pw_filter_events *events, void *data))                             \
  X(filter_connect, pw_filter_connect, int,                                                  \
    (struct pw_filter *filter, uint32_t flags, const struct spa_pod **params,                \
     uint32_t n_params))                                                                     \
  X(filter_disconnect, pw_filter_disconnect, int, (struct pw_filter *filter))                \
  X(filter_get_node_id, pw_filter_get_node_id, uint32_t, (struct pw_filter *filter))         \
  X(filter_add_port, pw_filter_add_port, void *,                                             \
    (struct pw_filter *filter, uint32_t direction, uint32_t flags, size_t port_data_size,    \
     struct pw_properties *props, const struct spa_pod **params, uint32_t n_params))         \
  X(filter_get_dsp_buffer, pw_filter_get_dsp_buffer, void *,                                 \
    (void *port_data, uint32_t n_samples))                                                   \
  X(filter_update_params, pw_filter_update_params, int,                                      \
    (struct pw_filter *filter, void *port_data, const struct spa_pod **params,               \
     uint32_t n_params))                                                                     \
  X(proxy_destroy, pw_proxy_destroy, void, (struct pw_proxy *proxy))

/* One pointer per function. */
struct micloop_pw {
#define MICLOOP_PW_POINTER(field, symbol, result, arguments) result(*_Nonnull field) arguments;
  MICLOOP_PW_FUNCTIONS(MICLOOP_PW_POINTER)
#undef MICLOOP_PW_POINTER
};

/* Fills `api` from an open libpipewire; returns NULL, or the name of the
   first function the library lacks. */
static inline const char *micloop_pw_resolve(struct micloop_pw *api, void *library) {
#define MICLOOP_PW_RESOLVE(field, symbol, result, arguments)         \
  api->field = (result(*) arguments)dlsym(library, #symbol);        \
  if (api->field == NULL) return #symbol;
  MICLOOP_PW_FUNCTIONS(MICLOOP_PW_RESOLVE)
#undef MICLOOP_PW_RESOLVE
  return NULL;
}

/* The inline interface methods: pw_core_add_listener, pw_core_sync,
   pw_core_get_registry, pw_core_create_object, pw_registry_add_listener,
   pw_registry_bind and pw_metadata_add_listener. */

static inline int micloop_pw_core_add_listener(struct pw_core *core, struct spa_hook *listener,
                                               const struct micloop_pw_core_events *events,
                                               void *data) {
  int result = -ENOTSUP;
  spa_interface_call_res((struct spa_interface *)core, struct micloop_pw_core_methods, result,
                         add_listener, 0, listener, events, data);
  return result;
}

static inline int micloop_pw_core_sync(struct pw_core *core, int seq) {
  int result = -ENOTSUP;
  spa_interface_call_res((struct spa_interface *)core, struct micloop_pw_core_methods, result,
                         sync, 0, MICLOOP_PW_ID_CORE, seq);
  return result;
}

static inline struct pw_registry *micloop_pw_core_get_registry(struct pw_core *core) {
  struct pw_registry *result = NULL;
  spa_interface_call_res((struct spa_interface *)core, struct micloop_pw_core_methods, result,
                         get_registry, 0, 3 /* PW_VERSION_REGISTRY */, 0);
  return result;
}

static inline struct pw_proxy *micloop_pw_core_create_link(struct pw_core *core,
                                                           const struct spa_dict *props) {
  void *result = NULL;
  spa_interface_call_res((struct spa_interface *)core, struct micloop_pw_core_methods, result,
                         create_object, 0, "link-factory", "PipeWire:Interface:Link",
                         3 /* PW_VERSION_LINK */, props, 0);
  return (struct pw_proxy *)result;
}

static inline int micloop_pw_registry_add_listener(
    struct pw_registry *registry, struct spa_hook *listener,
    const struct micloop_pw_registry_events *events, void *data) {
  int result = -ENOTSUP;
  spa_interface_call_res((struct spa_interface *)registry, struct micloop_pw_registry_methods,
                         result, add_listener, 0, listener, events, data);
  return result;
}

static inline struct pw_metadata *micloop_pw_registry_bind_metadata(struct pw_registry *registry,
                                                                    uint32_t id) {
  void *result = NULL;
  spa_interface_call_res((struct spa_interface *)registry, struct micloop_pw_registry_methods,
                         result, bind, 0, id, "PipeWire:Interface:Metadata",
                         3 /* PW_VERSION_METADATA */, 0);
  return (struct pw_metadata *)result;
}

static inline int micloop_pw_metadata_add_listener(
    struct pw_metadata *metadata, struct spa_hook *listener,
    const struct micloop_pw_metadata_events *events, void *data) {
  int result = -ENOTSUP;
  spa_interface_call_res((struct spa_interface *)metadata, struct micloop_pw_metadata_methods,
                         result, add_listener, 0, listener, events, data);
  return result;
}


/* A port's Latency parameter (SPA_PARAM_Latency), as the graph sets it on
   a filter that does its own latency (MICLOOP_PW_FILTER_FLAG_CUSTOM_LATENCY):
   true when `param` is one, with its values in `info`. */
static inline bool micloop_pw_parse_latency(uint32_t id, const struct spa_pod *param,
                                            struct spa_latency_info *info) {
  return id == SPA_PARAM_Latency && param != NULL && spa_latency_parse(param, info) >= 0;
}

/* An empty latency (nothing upstream or downstream) of `direction`. */
static inline struct spa_latency_info micloop_pw_no_latency(enum spa_direction direction) {
  struct spa_latency_info info = SPA_LATENCY_INFO(direction);
  return info;
}

/* Publishes `info` as the Latency parameter of the filter's port
   `port_data` (pw_filter_update_params; PipeWire's loop thread). */
static inline int micloop_pw_filter_publish_latency(const struct micloop_pw *api,
                                                    struct pw_filter *filter, void *port_data,
                                                    const struct spa_latency_info *info) {
  uint8_t buffer[1024];
  struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
  const struct spa_pod *params[1];
  params[0] = spa_latency_build(&builder, SPA_PARAM_Latency, info);
  if (params[0] == NULL) return -ENOSPC;
  return api->filter_update_params(filter, port_data, params, 1);
}
