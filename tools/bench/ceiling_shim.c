// The benchmark's ceiling at its strongest (tools/bench/run.sh, BENCH_LIBFUSE): preloaded into
// libfuse's own passthrough_hp example (LD_PRELOAD), it changes how the example is configured,
// never what it does: before the session is made it drops the example's FLUSH and extended
// attribute methods, so libfuse answers those requests ENOSYS and the kernel stops sending them
// for the mount (FLUSH, GETXATTR, LISTXATTR, SETXATTR, REMOVEXATTR: the example keeps no POSIX
// locks, so FLUSH carries nothing it needs), and after the example's own init it asks for
// READDIRPLUS on every listing chunk, not only the first (no FUSE_CAP_READDIRPLUS_AUTO). Built at
// benchmark time against the libfuse checkout's headers; never part of scopedfs.
#define _GNU_SOURCE
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 17)
#include <dlfcn.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <string.h>

typedef struct fuse_session* (*SessionNew)(struct fuse_args*, const struct fuse_lowlevel_ops*,
                                           size_t, const struct libfuse_version*, void*);

static struct fuse_lowlevel_ops shim_ops;
static void (*example_init)(void*, struct fuse_conn_info*);

static void shim_init(void* userdata, struct fuse_conn_info* conn) {
  if (example_init != NULL) example_init(userdata, conn);
  fuse_unset_feature_flag(conn, FUSE_CAP_READDIRPLUS_AUTO);
}

struct fuse_session* fuse_session_new_versioned(struct fuse_args* args,
                                                const struct fuse_lowlevel_ops* op,
                                                size_t op_size,
                                                const struct libfuse_version* version,
                                                void* userdata) {
  SessionNew real = (SessionNew)dlvsym(RTLD_NEXT, "fuse_session_new_versioned", "FUSE_3.17");
  if (real == NULL) real = (SessionNew)dlsym(RTLD_NEXT, "fuse_session_new_versioned");
  if (real == NULL || op == NULL || op_size > sizeof(shim_ops)) {
    fprintf(stderr, "ceiling_shim: cannot wrap this libfuse's fuse_session_new\n");
    return NULL;
  }
  memcpy(&shim_ops, op, op_size);
  shim_ops.flush = NULL;
  shim_ops.getxattr = NULL;
  shim_ops.listxattr = NULL;
  shim_ops.setxattr = NULL;
  shim_ops.removexattr = NULL;
  example_init = shim_ops.init;
  shim_ops.init = shim_init;
  return real(args, &shim_ops, op_size, version, userdata);
}
