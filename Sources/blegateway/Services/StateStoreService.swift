#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import PersistedState
import ServiceLifecycle

/// The state store (kept connections, standing subscriptions, the event
/// log), opened before anything else starts; on shutdown (last of all,
/// after the API's last events) commits what is queued and closes, so the
/// next start finds everything. A temporary directory (`--simulate`
/// without `--state-dir`) is removed then.
struct StateStoreService: Service {
    let store: Store
    /// The directory to remove once the store is closed, if it was made
    /// for this run only.
    let temporaryDirectory: String?
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        await abandon()
        logger.info("the state store is closed: \(store.path)")
    }

    /// Commits, closes, and removes a temporary directory (also when the
    /// start fails after the store opened).
    func abandon() async {
        await store.close()
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
    }
}
