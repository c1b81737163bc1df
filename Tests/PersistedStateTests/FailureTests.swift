import Foundation
import Glibc
import Testing
import TestSupport
@testable import PersistedState

/// A store the gateway cannot use is a clear error that names the file and
/// the fix, and the file is left as it was.
@Suite struct FailureTests {
    @Test func aFileOfGarbageIsReportedAsDamagedAndLeftAlone() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.file(Store.fileName)
        let garbage = (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(garbage)))
        let error = try openFailure(temporary.path)
        #expect(error.code == .corrupt)
        #expect(error.path == path)
        #expect(error.message.contains(path) && error.message.contains("move the file"), "\(error.message)")
        #expect(contents(path) == garbage)
    }

    @Test func aDamagedPageInsideTheFileIsFoundAtOpen() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Store.open(directory: temporary.path, options: testOptions())
        for index in 0..<5_000 { store.append(type: "n", data: Array(repeating: UInt8(index % 256), count: 200)) }
        try await store.flush()
        await store.close()
        // Closing checkpoints the log into the file; overwrite a page in
        // the middle of the events table.
        var bytes = contents(store.path)
        #expect(bytes.count > 40 * 4096)
        for offset in (20 * 4096)..<(21 * 4096) { bytes[offset] = 0xA5 }
        #expect(FileManager.default.createFile(atPath: store.path, contents: Data(bytes)))
        let error = try openFailure(temporary.path)
        #expect(error.code == .corrupt, "\(error.message)")
        #expect(error.message.contains(store.path))
    }

    @Test func aStoreFromANewerGatewayIsRefused() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Store.open(directory: temporary.path, options: testOptions())
        await store.close()
        do {
            let database = try Database(path: store.path)
            try database.execute("PRAGMA user_version = 99")
        }
        let before = contents(store.path)
        let error = try openFailure(temporary.path)
        #expect(error.code == .newerSchema)
        #expect(error.message.contains("schema version 99") && error.message.contains(store.path), "\(error.message)")
        #expect(contents(store.path) == before)
    }

    @Test func anotherProgramsDatabaseIsRefused() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.file(Store.fileName)
        do {
            let database = try Database(path: path)
            try database.execute("CREATE TABLE notes (text TEXT)")
        }
        let error = try openFailure(temporary.path)
        #expect(error.code == .notOurs)
        #expect(error.message.contains(path))
    }

    /// SQLite would take an empty file for a new database: a store
    /// truncated to nothing must not silently start over.
    @Test func anEmptyFileIsRefusedAndLeftAlone() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.file(Store.fileName)
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let error = try openFailure(temporary.path)
        #expect(error.code == .empty)
        #expect(error.message.contains(path) && error.message.contains("empty file"), "\(error.message)")
        #expect(contents(path).isEmpty)
    }

    @Test func aStateDirectoryThatCannotBeCreatedIsReported() throws {
        let temporary = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: temporary.file("file"), contents: Data()))
        let error = try openFailure(temporary.file("file/state"))
        #expect(error.code == .unwritable)
        #expect(error.message.contains("--state-dir"), "\(error.message)")
    }

    /// A read-only directory, empty or holding a store: the probe runs as
    /// an unprivileged user when the tests run as root (root writes
    /// anywhere).
    @Test(arguments: [false, true])
    func aReadOnlyStateDirectoryIsReported(holdingAStore: Bool) async throws {
        let temporary = try TemporaryDirectory()
        chmod(temporary.path, 0o755)
        let directory = temporary.file("state")
        mkdir(directory, 0o755)
        if holdingAStore {
            let store = try Store.open(directory: directory, options: testOptions())
            try await store.keep(KeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:01"))
            await store.close()
        }
        var command = [probeProgram, "open", directory]
        if getuid() == 0 {
            // The files belong to the unprivileged user, the directory to root.
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names { chown(directory + "/" + name, 65534, 65534) }
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        }
        chmod(directory, 0o555)
        let result = try await run(command)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.error.contains(directory), "\(result.error)")
        #expect(result.error.contains("cannot be written") && result.error.contains("--state-dir"), "\(result.error)")
    }

    private func openFailure(_ directory: String) throws -> StoreError {
        do {
            let store = try Store.open(directory: directory, options: testOptions())
            store.append(type: "unexpected", data: [])
            throw ProbeError("the store opened")
        } catch let error as StoreError {
            return error
        }
    }
}
