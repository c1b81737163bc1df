// The libdbus-1 surface the DBus module uses.
//
// The DBUS_TYPE_* and DBUS_MESSAGE_TYPE_* macros are casts ("((int) 'y')"),
// which the Swift importer skips, so they are re-exported here as constants.
// dbus_bool_t is a 4-byte unsigned int, not a C bool.
#ifndef BLEGATEWAY_CDBUS_SHIM_H
#define BLEGATEWAY_CDBUS_SHIM_H

#include <dbus/dbus.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

static const int CDBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int CDBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int CDBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int CDBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int CDBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int CDBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CDBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CDBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int CDBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int CDBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int CDBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int CDBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int CDBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int CDBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CDBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int CDBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int CDBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;

static const int CDBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int CDBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int CDBUS_MESSAGE_TYPE_ERROR = DBUS_MESSAGE_TYPE_ERROR;
static const int CDBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL;

static const int CDBUS_TIMEOUT_INFINITE_VALUE = DBUS_TIMEOUT_INFINITE;

// Linux calls the DBus module's loop thread needs; Glibc's Swift module
// leaves out these GNU extensions.

/// A non-blocking, close-on-exec eventfd, or -1.
static inline int cdbus_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/// Names the calling thread (at most 15 characters are kept).
static inline void cdbus_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/// Makes a posix_spawn child start clean: descriptors from 3 up closed, an
/// empty signal mask and default signal dispositions (a Swift process blocks
/// signals on its threads, and a child would inherit that mask), and a
/// process group of its own so that it can be stopped as a whole.
static inline int cdbus_spawn_clean_child(posix_spawn_file_actions_t *actions, posix_spawnattr_t *attributes) {
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  if (posix_spawn_file_actions_addclosefrom_np(actions, 3) != 0) return -1;
  if (posix_spawnattr_setsigmask(attributes, &none) != 0) return -1;
  if (posix_spawnattr_setsigdefault(attributes, &all) != 0) return -1;
  if (posix_spawnattr_setpgroup(attributes, 0) != 0) return -1;
  return posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
}

/// pipe(2) with both ends close-on-exec; returns 0 or -1.
static inline int cdbus_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

#endif
