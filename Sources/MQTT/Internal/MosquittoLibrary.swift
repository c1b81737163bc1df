import CMosquitto

/// libmosquitto, opened the first time a client is made rather than when
/// the process starts: a gateway without `--mqtt` then maps neither it nor
/// the TLS libraries it links (see CMosquitto.h).
enum MosquittoLibrary {
    /// Opens the library and initialises it, once; throws, on every call,
    /// when it cannot be opened (not installed, or too old to have a
    /// function the client calls).
    static func load() throws(MQTTError) {
        if let failure = outcome { throw failure }
    }

    /// nil once loaded and initialised. `mosquitto_lib_init` is not
    /// thread-safe and must run once before any other call: a global's
    /// lazy initialiser runs exactly once.
    private static let outcome: MQTTError? = {
        var reason = [CChar](repeating: 0, count: 512)
        guard cmosq_load(&reason, reason.count) == 0 else {
            let text = reason.withUnsafeBufferPointer { buffer in
                // cmosq_load always terminates what it writes.
                String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            return MQTTError(.libraryUnavailable, "cannot load libmosquitto (\(text)): --mqtt needs Debian's libmosquitto1")
        }
        let result = cmosq_lib_init()
        guard result == CMOSQ_ERR_SUCCESS else { return MQTTError.library(result, "libmosquitto's initialisation") }
        return nil
    }()
}
