import Glibc

/// The state directory: created if missing, and locked so that one process
/// at a time uses it.
enum StateDirectory {
    /// Creates `directory` and its missing parents (mode 0750).
    static func create(_ directory: String) throws(StoreError) {
        guard !directory.isEmpty else {
            throw StoreError(code: .unwritable, path: directory, message: "the state directory must not be empty")
        }
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            var status = stat()
            if stat(prefix, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw StoreError(
                        code: .unwritable, path: directory,
                        message: "cannot use the state directory \(directory): \(prefix) is not a directory. Choose another with --state-dir.")
                }
                continue
            }
            if mkdir(prefix, 0o750) != 0 && errno != EEXIST {
                throw StoreError(
                    code: .unwritable, path: directory,
                    message: """
                        cannot create the state directory \(directory) (\(String(cString: strerror(errno)))). Create it \
                        and give the gateway's user write access (in a container, mount a volume there), or choose \
                        another with --state-dir.
                        """)
            }
        }
    }

    /// Takes the directory's exclusive lock and returns its descriptor,
    /// which holds the lock until closed (a killed process's lock goes with
    /// it).
    ///
    /// A lock file of its own, not the database: SQLite's POSIX locks on the
    /// database would be dropped when any other descriptor of this process
    /// on that file closed.
    static func lock(_ directory: String, databasePath: String) throws(StoreError) -> Int32 {
        let lockPath = directory.hasSuffix("/") ? directory + Store.lockFileName : directory + "/" + Store.lockFileName
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else {
            throw StoreError(
                code: .unwritable, path: directory,
                message: """
                    the state directory \(directory) cannot be written (\(lockPath): \
                    \(String(cString: strerror(errno)))). Give the gateway's user write access to it (in a \
                    container, mount a writable volume there), or choose another with --state-dir.
                    """)
        }
        // A child this process is starting holds a copy of the descriptor of
        // a store just closed until it runs exec (the lock belongs to the
        // open file, which both share): so a held lock is tried again for
        // a moment before it counts as another process's.
        var result = flock(descriptor, LOCK_EX | LOCK_NB)
        var attempts = 0
        while result != 0, errno == EWOULDBLOCK, attempts < 100 {
            attempts += 1
            usleep(20_000)
            result = flock(descriptor, LOCK_EX | LOCK_NB)
        }
        guard result == 0 else {
            let reason = errno
            close(descriptor)
            if reason == EWOULDBLOCK {
                throw StoreError(
                    code: .inUse, path: databasePath,
                    message: """
                        the state store \(databasePath) is in use by another process (another blegateway with the same \
                        --state-dir?). Stop it, or give this one a directory of its own.
                        """)
            }
            throw StoreError(
                code: .io, path: lockPath,
                message: "cannot lock \(lockPath): \(String(cString: strerror(reason)))")
        }
        return descriptor
    }
}
