import Foundation
import Glibc
@testable import PersistedState

/// A fresh directory under /tmp, removed when released.
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/blegateway-store-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ProbeError("mkdtemp failed: errno \(errno)") }
        path = String(cString: made)
    }

    deinit {
        // A test may have made it read-only.
        chmod(path, 0o755)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }
}

struct ProbeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `persisted-state-probe`, built beside the test bundle.
let probeProgram: String = {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var directory = URL(fileURLWithPath: me).deletingLastPathComponent()
    while directory.path != "/" {
        let candidate = directory.appendingPathComponent("persisted-state-probe").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    return "persisted-state-probe"
}()

/// Options that keep a test's store small and quick.
func testOptions(_ change: (inout StoreOptions) -> Void = { _ in }) -> StoreOptions {
    var options = StoreOptions()
    options.durability = .normal
    change(&options)
    return options
}

/// Every stored event, read page by page.
func allEvents(_ store: Store, pageSize: Int = 1_000) async throws -> [StoredEvent] {
    var events: [StoredEvent] = []
    var after: UInt64 = 0
    while true {
        let page = try await store.events(after: after, limit: pageSize)
        events += page
        guard let last = page.last, page.count == pageSize else { return events }
        after = last.id
    }
}

/// The bytes of a file.
func contents(_ path: String) -> [UInt8] {
    (FileManager.default.contents(atPath: path)).map { [UInt8]($0) } ?? []
}

/// A big-endian 32-bit field of a database file's header.
func headerField(_ path: String, at offset: Int) -> UInt32 {
    let bytes = contents(path)
    guard bytes.count >= offset + 4 else { return 0 }
    return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
}
