import DBus
import Synchronization

/// Records every signal org.bluez emits (subscribed before the simulator
/// starts, as a client should), for tests to inspect.
final class SignalRecorder: Sendable {
    private final class Storage: Sendable {
        let messages = Mutex<[Message]>([])
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    /// Records from `connection`; with nil, records nothing.
    init(_ connection: Connection?) async throws {
        guard let connection else {
            task = Task {}
            return
        }
        let stream = try await connection.signals(matching: MatchRule(sender: "org.bluez"), bufferSize: 200_000)
        let storage = self.storage
        task = Task {
            do {
                for try await message in stream { storage.messages.withLock { $0.append(message) } }
            } catch {}
        }
    }

    func stop() {
        task.cancel()
    }

    var all: [Message] { storage.messages.withLock { $0 } }

    func clear() { storage.messages.withLock { $0.removeAll() } }

    /// PropertiesChanged of `interface` at `path`: (changed, invalidated).
    func changes(at path: ObjectPath, _ interface: String) -> [(changed: [String: Value], invalidated: [String])] {
        all.filter { $0.member == "PropertiesChanged" && $0.path == path && $0.body.first?.string == interface }
            .map { ($0.body[1].vardict ?? [:], $0.body[2].strings ?? []) }
    }

    /// Paths announced by InterfacesAdded (in order).
    var added: [ObjectPath] {
        all.filter { $0.member == "InterfacesAdded" }.compactMap { $0.body.first?.objectPath }
    }

    var removed: [ObjectPath] {
        all.filter { $0.member == "InterfacesRemoved" }.compactMap { $0.body.first?.objectPath }
    }

    func count(where predicate: (Message) -> Bool) -> Int {
        storage.messages.withLock { $0.reduce(0) { $0 + (predicate($1) ? 1 : 0) } }
    }
}
