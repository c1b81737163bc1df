#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import PersistedState
import ServiceLifecycle

/// The state store (kept connections, standing subscriptions, the event
/// log), opened on its own thread while the bus and the central start (the
/// API waits for both); on shutdown (last of all,
/// after the API's last events) commits what is queued and closes, so the
/// next start finds everything. A temporary directory (`--simulate`
/// without `--state-dir`) is removed then.
struct StateStoreService: GatewayService {
    /// nil: a fresh temporary directory.
    let directory: String?
    /// `--state-durability`.
    let durability: StoreOptions.Durability
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        let (store, temporaryDirectory) = try await open()
        handoffs.store.hand(store)
        try? await gracefulShutdown()
        await store.close()
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
        logger.info("the state store is closed: \(store.path)")
    }

    /// Opens the store in `directory` (or a fresh temporary one): a store
    /// that cannot be used stops the start with the store's own
    /// explanation, which names the file and the fix.
    private func open() async throws(StartupError) -> (Store, temporaryDirectory: String?) {
        let path: String
        let temporary: Bool
        if let directory {
            path = directory
            temporary = false
        } else {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("blegateway-state-\(UUID().uuidString)").path
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw StartupError("cannot make a temporary state directory \(path) (\(error)); give one with --state-dir")
            }
            temporary = true
        }
        let store: Store
        do {
            var options = StoreOptions()
            options.durability = durability
            store = try await Store.openWithoutBlocking(directory: path, options: options, logger: logger)
        } catch {
            if temporary { try? FileManager.default.removeItem(atPath: path) }
            throw StartupError("the state store cannot be used: \(error.message)")
        }
        let summary = store.eventLogSummary
        logger.info(
            "state store \(store.path)\(temporary ? " (temporary, removed on exit)" : ""), durability \(durability.rawValue): \(summary.count) stored event(s), next event id \(store.nextEventID)")
        return (store, temporary ? path : nil)
    }
}
