import Foundation
import Glibc
import Testing
@testable import PersistedState

/// Losses are never silent: what a damaged write-ahead log rolled back is
/// reported at open, and event ids handed out but never stored (a full
/// disk) are a known gap, across restarts.
@Suite struct IntegrityTests {
    @Test func aDamagedWriteAheadLogIsReportedWithWhatItRolledBack() async throws {
        let original = try TemporaryDirectory()
        let store = try Store.open(directory: original.path, options: testOptions())
        for index in 0..<100 {
            _ = try await store.addSubscription(
                adapter: "hci0", address: String(format: "AA:BB:CC:DD:EE:%02X", index), characteristic: .uuid("2a37"),
                mode: .notify)
        }
        // The files as a crash would leave them: the database, its log
        // (every commit is in it, acknowledged) and the ledger.
        let crashed = try TemporaryDirectory()
        for name in [Store.fileName, Store.fileName + "-wal", Ledger.fileName] {
            try FileManager.default.copyItem(atPath: original.file(name), toPath: crashed.file(name))
        }
        await store.close()
        var log = contents(crashed.file(Store.fileName + "-wal"))
        #expect(log.count > 100 * 1024, "the log holds \(log.count) bytes")
        var generator = SystemRandomNumberGenerator()
        let offset = log.count / 2
        for index in offset..<offset + 64 { log[index] = generator.next() }
        #expect(FileManager.default.createFile(atPath: crashed.file(Store.fileName + "-wal"), contents: Data(log)))

        let damaged = try Store.open(directory: crashed.path, options: testOptions())
        let recovery = try #require(damaged.recovery)
        let remaining = try await damaged.subscriptions().count
        #expect(remaining < 100)
        #expect(recovery.missingCommits >= Int64(100 - remaining), "\(recovery)")
        #expect(recovery.before.subscriptions == 100)
        #expect(recovery.after.subscriptions == remaining)
        await damaged.close()
        // Said once: the next start has nothing more to report.
        let reopened = try Store.open(directory: crashed.path, options: testOptions())
        #expect(reopened.recovery == nil)
        await reopened.close()
    }

    @Test func aCleanRestartReportsNothingLost() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Store.open(directory: temporary.path, options: testOptions())
        try await store.keep(KeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:01"))
        for _ in 0..<1_000 { store.append(type: "n", data: [1, 2, 3]) }
        _ = store.reserveEventID()
        await store.close()
        let reopened = try Store.open(directory: temporary.path, options: testOptions())
        #expect(reopened.recovery == nil)
        #expect(try await reopened.missingEvents(after: 0, through: .max).isEmpty)
        await reopened.close()
    }

    /// A real full disk: a small tmpfs, filled up. Events lost while it is
    /// full are a gap whether the disk recovers while the gateway runs or
    /// only after it stopped; the error says the disk is full.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func eventsLostToAFullDiskAreAGapAcrossRestarts() async throws {
        let mountPoint = try TemporaryDirectory()
        try #require(mount("tmpfs", mountPoint.path, "tmpfs", 0, "size=2m") == 0, "mount: errno \(errno)")
        defer { umount2(mountPoint.path, Int32(MNT_DETACH)) }
        let directory = mountPoint.file("state")
        let filler = mountPoint.file("filler")
        let store = try Store.open(directory: directory, options: testOptions())
        let first = store.append(type: "n", data: [1])
        try await store.waitUntilCommitted(first)

        let lostWhileRunning = try await fillAndLose(store, filler: filler)
        unlink(filler)
        let stored = store.append(type: "n", data: [2])
        try await store.waitUntilCommitted(stored)
        #expect(try await store.missingEvents(after: first, through: stored) == [lostWhileRunning])

        let lostAtStop = try await fillAndLose(store, filler: filler)
        await store.close()
        unlink(filler)

        let reopened = try Store.open(directory: directory, options: testOptions())
        let recovery = try #require(reopened.recovery)
        let lostIDs = try #require(recovery.lostEventIDs)
        #expect(lostIDs.contains(lostAtStop.upperBound), "\(recovery)")
        #expect(reopened.nextEventID > lostAtStop.upperBound)
        let missing = try await reopened.missingEvents(after: first, through: .max)
        #expect(missing.first == lostWhileRunning, "\(missing)")
        #expect(missing.contains { $0.contains(lostAtStop.lowerBound) && $0.contains(lostAtStop.upperBound) }, "\(missing)")
        await reopened.close()
    }

    /// Fills the file system with `filler`, then appends events until one
    /// fails; checks the failure says the disk is full. Returns the ids
    /// that failed.
    private func fillAndLose(_ store: Store, filler: String) async throws -> ClosedRange<UInt64> {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        close(descriptor)
        var failed: [UInt64] = []
        for _ in 0..<200 {
            let id = store.append(type: "n", data: [UInt8](repeating: 7, count: 3000))
            do {
                try await store.waitUntilCommitted(id)
                if !failed.isEmpty { break }
            } catch {
                #expect(error.code == .diskFull, "\(error.code): \(error.message)")
                #expect(error.message.contains("the disk is full"), "\(error.message)")
                failed.append(id)
                if failed.count == 3 { break }
            }
        }
        let first = try #require(failed.first, "no commit failed on a full disk")
        return first...(failed.last ?? first)
    }
}
