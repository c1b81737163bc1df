import Foundation
import Glibc
import Synchronization
import Testing
@testable import PersistedState
import TestSupport

/// Kept connections, standing subscriptions and the event log, written and
/// read back through a real SQLite file, across close and reopen.
@Suite struct StoreTests {
    @Test func aNewStoreIsCreatedWithItsDirectoryInWALModeAtTheLatestSchemaVersion() async throws {
        let temporary = try TemporaryDirectory()
        let directory = temporary.file("state/nested")
        let store = try Store.open(directory: directory, options: testOptions())
        #expect(store.path == directory + "/blegateway.sqlite")
        #expect(store.nextEventID == 1)
        #expect(store.eventLogSummary == EventLogSummary(count: 0, oldestID: nil, newestID: nil))
        await store.close()
        // The header, read without SQLite: WAL (file format 2 at bytes 18
        // and 19), user_version at 60, application_id at 68.
        let header = contents(store.path)
        #expect(header.count >= 100 && header[18] == 2 && header[19] == 2)
        #expect(headerField(store.path, at: 60) == UInt32(Store.schemaVersion))
        #expect(headerField(store.path, at: 68) == 0x424C_4547)
    }

    @Test func keptConnectionsAreAddedReplacedRemovedAndRestored() async throws {
        let temporary = try TemporaryDirectory()
        let first = Date(timeIntervalSince1970: 1_700_000_000.123456)
        var store = try Store.open(directory: temporary.path, options: testOptions())
        #expect(try await store.keep(KeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", options: Array(#"{"a":1}"#.utf8), created: first)))
        #expect(try await store.keep(KeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:02", created: first + 1)))
        #expect(try await store.keep(KeptConnection(adapter: "hci1", address: "AA:BB:CC:DD:EE:01", created: first + 2)))
        // Keeping again replaces the options and keeps the first time.
        #expect(try await store.keep(KeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", options: Array(#"{"a":2}"#.utf8), created: first + 10)) == false)
        #expect(try await store.removeKeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:02"))
        #expect(try await store.removeKeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:02") == false)
        let expected = [
            KeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", options: Array(#"{"a":2}"#.utf8), created: first),
            KeptConnection(adapter: "hci1", address: "AA:BB:CC:DD:EE:01", created: first + 2),
        ]
        #expect(try await store.keptConnections().map(\.adapter) == expected.map(\.adapter))
        #expect(try await store.keptConnections().map(\.options) == expected.map(\.options))
        await store.close()

        store = try Store.open(directory: temporary.path, options: testOptions())
        let restored = try await store.keptConnections()
        #expect(restored.map(\.address) == expected.map(\.address))
        #expect(restored.map(\.options) == expected.map(\.options))
        // Microseconds survive.
        #expect(restored.map { $0.created.timeIntervalSince1970 } == expected.map { Date(storedMicroseconds: $0.created.storedMicroseconds).timeIntervalSince1970 })
        await store.close()
    }

    @Test func standingSubscriptionsAreAddedRemovedAndRestoredWithIdsNeverReused() async throws {
        let temporary = try TemporaryDirectory()
        var store = try Store.open(directory: temporary.path, options: testOptions())
        let byUUID = try await store.addSubscription(
            adapter: "hci0", address: "AA:BB:CC:DD:EE:01", service: "180d", characteristic: .uuid("2a37"), mode: .notify)
        let byHandle = try await store.addSubscription(
            adapter: "hci0", address: "AA:BB:CC:DD:EE:02", characteristic: .handle(42), mode: .indicate)
        let newest = try await store.addSubscription(
            adapter: "hci1", address: "AA:BB:CC:DD:EE:03", characteristic: .uuid("2a19"), mode: .notify)
        #expect(byUUID.id < byHandle.id && byHandle.id < newest.id)
        #expect(try await store.removeSubscription(id: newest.id))
        #expect(try await store.removeSubscription(id: newest.id) == false)
        #expect(try await store.subscriptions() == [byUUID, byHandle])
        await store.close()

        store = try Store.open(directory: temporary.path, options: testOptions())
        #expect(try await store.subscriptions() == [byUUID, byHandle])
        let next = try await store.addSubscription(
            adapter: "hci0", address: "AA:BB:CC:DD:EE:04", characteristic: .handle(7), mode: .notify)
        #expect(next.id > newest.id)
        await store.close()
    }

    @Test func eventsRoundTripAndTheirIdsContinueAfterAReopen() async throws {
        let temporary = try TemporaryDirectory()
        var store = try Store.open(directory: temporary.path, options: testOptions())
        let moment = Date(timeIntervalSince1970: 1_750_000_000.5)
        let appended = [
            store.append(type: "adapter-state", data: Array(#"{"state":"on"}"#.utf8), timestamp: moment),
            store.append(type: "characteristic-value", device: "AA:BB:CC:DD:EE:01", data: Array(#"{"value":"0e77"}"#.utf8), timestamp: moment),
            store.append(type: "empty", data: [], timestamp: moment),
        ]
        #expect(appended == [1, 2, 3])
        try await store.waitUntilCommitted(3)
        let events = try await store.events(after: 0)
        #expect(events == [
            StoredEvent(id: 1, type: "adapter-state", device: nil, data: Array(#"{"state":"on"}"#.utf8), timestamp: moment),
            StoredEvent(id: 2, type: "characteristic-value", device: "AA:BB:CC:DD:EE:01", data: Array(#"{"value":"0e77"}"#.utf8), timestamp: moment),
            StoredEvent(id: 3, type: "empty", device: nil, data: [], timestamp: moment),
        ])
        #expect(store.eventLogSummary == EventLogSummary(count: 3, oldestID: 1, newestID: 3))
        await store.close()

        store = try Store.open(directory: temporary.path, options: testOptions())
        #expect(store.nextEventID == 4)
        #expect(try await store.events(after: 0) == events)
        #expect(store.eventLogSummary == EventLogSummary(count: 3, oldestID: 1, newestID: 3))
        #expect(store.append(type: "after-restart", data: []) == 4)
        await store.close()
    }

    @Test func anEventsJSONCanBeMadeOnTheStoresThread() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Store.open(directory: temporary.path, options: testOptions())
        let producer = pthread_self()
        let madeElsewhere = Mutex<Bool?>(nil)
        let id = store.append(type: "deferred", device: "AA:BB:CC:DD:EE:01") {
            madeElsewhere.withLock { $0 = pthread_equal(pthread_self(), producer) == 0 }
            return Array(#"{"made":"late"}"#.utf8)
        }
        try await store.waitUntilCommitted(id)
        #expect(madeElsewhere.withLock { $0 } == true)
        #expect(try await store.events(after: 0).map(\.data) == [Array(#"{"made":"late"}"#.utf8)])
        await store.close()
    }

    @Test func reservedIdsAreNotHandedOutAgainAfterAReopen() async throws {
        let temporary = try TemporaryDirectory()
        var store = try Store.open(directory: temporary.path, options: testOptions())
        #expect(store.append(type: "stored", data: []) == 1)
        #expect(store.reserveEventID() == 2)
        #expect(store.reserveEventID() == 3)
        try await store.waitUntilCommitted(3)
        await store.close()
        store = try Store.open(directory: temporary.path, options: testOptions())
        #expect(store.nextEventID == 4)
        #expect(try await store.events(after: 0).map(\.id) == [1])
        await store.close()
    }

    @Test func theLogIsReadInPagesAfterAnyId() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Store.open(directory: temporary.path, options: testOptions())
        for index in 1...2_500 { store.append(type: "n", data: Array("\(index)".utf8)) }
        try await store.flush()
        #expect(try await store.events(after: 0, limit: 1_000).map(\.id) == Array(1...1_000))
        #expect(try await store.events(after: 1_000, limit: 1_000).map(\.id) == Array(1_001...2_000))
        #expect(try await store.events(after: 2_000, limit: 1_000).map(\.id) == Array(2_001...2_500))
        #expect(try await store.events(after: 2_500, limit: 1_000).isEmpty)
        #expect(try await store.events(after: 1_234, limit: 3).map(\.id) == [1_235, 1_236, 1_237])
        #expect(try await store.events(after: 1_234, limit: 3).map { String(decoding: $0.data, as: UTF8.self) } == ["1235", "1236", "1237"])
        let all = try await allEvents(store, pageSize: 333)
        #expect(all.map(\.id) == Array(1...2_500))
        await store.close()
    }

    @Test func theLogIsPrunedOldestFirstInBatchesAndStaysBounded() async throws {
        let temporary = try TemporaryDirectory()
        let options = testOptions {
            $0.maximumEventCount = 100
            $0.pruneBatch = 20
        }
        var store = try Store.open(directory: temporary.path, options: options)
        for round in 0..<10 {
            for index in 1...97 { store.append(type: "n", data: Array("\(round * 97 + index)".utf8)) }
            try await store.flush()
            let summary = store.eventLogSummary
            let stored = try await allEvents(store)
            #expect(stored.count == summary.count)
            #expect(summary.count <= 100)
            #expect(stored.last?.id == UInt64((round + 1) * 97))
            // The newest events, with no hole.
            #expect(stored.map(\.id) == Array((stored.first?.id ?? 1)...UInt64((round + 1) * 97)))
            #expect(summary.oldestID == stored.first?.id && summary.newestID == stored.last?.id)
        }
        #expect(store.statistics.pruned == UInt64(970 - store.eventLogSummary.count))
        #expect(store.eventLogSummary.count >= 80)
        await store.close()
        store = try Store.open(directory: temporary.path, options: options)
        #expect(store.nextEventID == 971)
        #expect(try await allEvents(store).count == store.eventLogSummary.count)
        await store.close()
    }

    @Test func appendsFromManyTasksGetDistinctIncreasingIdsAndAreAllStored() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Store.open(directory: temporary.path, options: testOptions { $0.batchSize = 256 })
        let tasks = 16
        let perTask = 2_000
        let idsByTask = try await withThrowingTaskGroup(of: (Int, [UInt64]).self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var ids: [UInt64] = []
                    for index in 0..<perTask {
                        ids.append(store.append(type: "t\(task)", data: Array("\(index)".utf8)))
                        if index % 100 == 0 { await Task.yield() }
                    }
                    try await store.waitUntilCommitted(ids[ids.count - 1])
                    return (task, ids)
                }
            }
            var result: [Int: [UInt64]] = [:]
            for try await (task, ids) in group { result[task] = ids }
            return result
        }
        let all = idsByTask.values.flatMap { $0 }
        #expect(Set(all).count == tasks * perTask)
        #expect(Set(all) == Set(1...UInt64(tasks * perTask)))
        for ids in idsByTask.values { #expect(ids == ids.sorted()) }
        let stored = try await allEvents(store)
        #expect(stored.map(\.id) == Array(1...UInt64(tasks * perTask)))
        for (task, ids) in idsByTask {
            let mine = stored.filter { $0.type == "t\(task)" }
            #expect(mine.map(\.id) == ids)
            #expect(mine.map { String(decoding: $0.data, as: UTF8.self) } == (0..<perTask).map(String.init))
        }
        #expect(store.statistics.committed == UInt64(tasks * perTask))
        #expect(store.statistics.largestBatch <= 256)
        await store.close()
    }

    @Test func aFullQueueDropsEventsWithoutBlockingAndSaysWhichWereLost() async throws {
        let temporary = try TemporaryDirectory()
        // Nothing is due until someone waits: the queue only fills.
        let store = try Store.open(
            directory: temporary.path,
            options: testOptions {
                $0.maximumQueuedEvents = 10
                $0.batchInterval = .seconds(3_600)
            })
        let ids = (1...25).map { store.append(type: "n", data: Array("\($0)".utf8)) }
        #expect(ids == Array(1...25))
        try await store.waitUntilCommitted(10)
        do {
            try await store.waitUntilCommitted(11)
            Issue.record("a dropped event was acknowledged")
        } catch {
            #expect(error.code == .dropped, "\(error)")
        }
        #expect(store.statistics.lost == 15)
        #expect(try await store.events(after: 0).map(\.id) == Array(1...10))
        // Room again once the queue is committed.
        let next = store.append(type: "n", data: [])
        try await store.waitUntilCommitted(next)
        #expect(try await store.events(after: 10).map(\.id) == [26])
        await store.close()
    }

    @Test func aClosedStoreRefusesWorkAndSaysSo() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Store.open(directory: temporary.path, options: testOptions())
        store.append(type: "before", data: [])
        await store.close()
        let id = store.append(type: "after", data: [])
        await #expect(throws: StoreError.self) { try await store.waitUntilCommitted(id) }
        do {
            _ = try await store.keptConnections()
            Issue.record("a closed store answered")
        } catch {
            #expect(error.code == .closed)
        }
        let reopened = try Store.open(directory: temporary.path, options: testOptions())
        #expect(try await reopened.events(after: 0).map(\.type) == ["before"])
        await reopened.close()
    }

    @Test func aSecondProcessCannotOpenAStoreInUse() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Store.open(directory: temporary.path, options: testOptions())
        let result = try await TestSupport.run([probeProgram, "open", temporary.path])
        #expect(result.status == 1)
        #expect(result.error.contains("in use by another process"), "\(result.error)")
        #expect(result.error.contains(store.path))
        await store.close()
        let again = try await TestSupport.run([probeProgram, "open", temporary.path])
        #expect(again.status == 0, "\(again.error)")
        #expect(again.output.contains("opened next=1"))
    }
}
