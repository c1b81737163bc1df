// The SQLite 3 surface the PersistedState module uses (Debian's libsqlite3).
//
// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which the Swift
// importer skips: the bind wrappers below pass it, so SQLite copies the
// bytes before the call returns and Swift's buffers need not outlive it.
#ifndef BLEGATEWAY_CSQLITE_SHIM_H
#define BLEGATEWAY_CSQLITE_SHIM_H

#include <sqlite3.h>
#include <sys/prctl.h>

/// sqlite3_bind_text with a copy of `length` bytes of `text`.
static inline int csqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
  return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/// sqlite3_bind_blob with a copy of `length` bytes; an empty blob (not NULL)
/// when `length` is 0, which sqlite3_bind_blob would bind as NULL for a null
/// pointer.
static inline int csqlite_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
  if (length == 0) return sqlite3_bind_zeroblob(statement, index, 0);
  return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

/// Names the calling thread (at most 15 characters are kept), so that the
/// store's writer shows in `top -H` and in debuggers.
static inline void csqlite_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

#endif
