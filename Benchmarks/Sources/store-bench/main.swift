// store-bench: the event log of the state store alone (PersistedState), in
// a temporary directory on the disk the gateway would use.
//
//   store-bench [DIRECTORY] [SECONDS]
//
// For each durability and batch interval: the producer's cost per append
// (flat out, nothing waits), the rate the writer commits at, and, at a
// steady 20,000 events/s, whether the writer keeps up (nothing lost, the
// queue stays short) and how long an append waits for its commit.
import Foundation
import Glibc
import PersistedState

let arguments = CommandLine.arguments
let base = arguments.count > 1 ? arguments[1] : "/tmp"
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 3 : 3

/// A characteristic-value event's JSON, as the gateway writes it (~230 bytes).
let sample = Array(
    #"{"type":"characteristic-value","timestamp":"2026-11-24T10:00:00.000Z","adapter":"hci0","address":"AA:BB:CC:DD:EE:01","service":"0000180d-0000-1000-8000-00805f9b34fb","characteristic":"00002a37-0000-1000-8000-00805f9b34fb","value":"0e77","encoding":"hex"}"#
        .utf8)

func temporaryDirectory() -> String {
    var template = Array("\(base)/store-bench-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("mkdtemp in \(base) failed") }
    return String(cString: made)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// Appends `count` events as fast as one task can (the queue holds them
/// all), then waits for the last commit: the producer's cost per append and
/// the writer's best rate.
func flatOut(_ options: StoreOptions, deferred: Bool = false, count: Int = 500_000) async throws -> String {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var options = options
    options.maximumQueuedEvents = count
    let store = try Store.open(directory: directory, options: options)
    let clock = ContinuousClock()
    let start = clock.now
    if deferred {
        // The JSON made on the store's thread, as the gateway would hand it.
        for _ in 0..<count {
            store.append(type: "characteristic-value", device: "AA:BB:CC:DD:EE:01") { sample }
        }
    } else {
        for _ in 0..<count {
            store.append(type: "characteristic-value", device: "AA:BB:CC:DD:EE:01", data: sample)
        }
    }
    let producerTime = clock.now - start
    try await store.flush()
    let total = clock.now - start
    let statistics = store.statistics
    await store.close()
    let nsPerAppend = milliseconds(producerTime) * 1e6 / Double(count)
    let committedPerSecond = Double(statistics.committed) / (milliseconds(total) / 1000)
    return String(
        format: "| flat out%@ | %@ | %.0f ms | %.0f ns | %.0f | %llu | %d | %llu |", deferred ? ", JSON deferred" : "",
        options.durability.rawValue,
        milliseconds(options.batchInterval), nsPerAppend, committedPerSecond, statistics.batches,
        statistics.largestBatch, statistics.lost)
}

/// Appends at `rate` events/s for `seconds`, timing some commits.
func steady(_ options: StoreOptions, rate: Int) async throws -> String {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try Store.open(directory: directory, options: options)
    let clock = ContinuousClock()
    let start = clock.now
    let end = start + .milliseconds(Int(seconds * 1000))
    var appended = 0
    var latencies: [Double] = []
    var maximumQueue: UInt64 = 0
    let watchers = ManagedLatencies()
    let cpuBefore = cpuSeconds()
    while clock.now < end {
        let owed = Int(Double(rate) * milliseconds(clock.now - start) / 1000) - appended
        if owed > 0 {
            for index in 0..<owed {
                let appendedAt = clock.now
                let id = store.append(type: "characteristic-value", device: "AA:BB:CC:DD:EE:01", data: sample)
                // One event in 500 is followed to its commit.
                if (appended + index) % 500 == 0 {
                    Task.detached {
                        try? await store.waitUntilCommitted(id)
                        watchers.add(milliseconds(clock.now - appendedAt))
                    }
                }
            }
            appended += owed
        }
        let statistics = store.statistics
        maximumQueue = max(maximumQueue, statistics.appended - statistics.committed - statistics.lost)
        try await Task.sleep(for: .milliseconds(1))
    }
    let cpu = cpuSeconds() - cpuBefore
    try await store.flush()
    try await Task.sleep(for: .milliseconds(50))
    latencies = watchers.values
    let statistics = store.statistics
    await store.close()
    return String(
        format: "| %d/s steady | %@ | %.0f ms | %d | %.0f | %llu | %d | %llu | queue max %llu, awaited commit p50 %.1f ms, p99 %.1f ms, CPU %.0f%% of a core (producer and writer) |",
        rate, options.durability.rawValue, milliseconds(options.batchInterval), appended,
        Double(statistics.batches) / seconds, statistics.batches, statistics.largestBatch, statistics.lost, maximumQueue,
        percentile(latencies, 0.5), percentile(latencies, 0.99), cpu / seconds * 100)
}

/// User and system CPU time of this process so far.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Commit latencies gathered from detached tasks.
final class ManagedLatencies: @unchecked Sendable {
    // Guarded by `lock`.
    private var list: [Double] = []
    private let lock = NSLock()
    func add(_ value: Double) { lock.withLock { list.append(value) } }
    var values: [Double] { lock.withLock { list } }
}

print("SQLite \(Store.sqliteVersion), directory \(base), \(seconds) s per run, events of \(sample.count) bytes of JSON")
print("| run | durability | batch interval | ns per append | events committed/s | batches | largest batch | lost |")
print("|---|---|---|---|---|---|---|---|")
for durability in [StoreOptions.Durability.full, .normal] {
    for interval in [1, 5, 20] {
        var options = StoreOptions()
        options.durability = durability
        options.batchInterval = .milliseconds(interval)
        print(try await flatOut(options))
    }
}
print(try await flatOut(StoreOptions(), deferred: true))
print("")
print("| run | durability | batch interval | events | transactions/s | batches | largest batch | lost | notes |")
print("|---|---|---|---|---|---|---|---|---|")
for durability in [StoreOptions.Durability.full, .normal] {
    for interval in [1, 5, 20] {
        var options = StoreOptions()
        options.durability = durability
        options.batchInterval = .milliseconds(interval)
        print(try await steady(options, rate: 20_000))
    }
}

/// Opening a store with 100 kept connections, 100 subscriptions and 100,000
/// events, and reading the connections and subscriptions back.
func restore(verify: Bool) async throws -> String {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var options = StoreOptions()
    options.maximumQueuedEvents = 200_000
    var store = try Store.open(directory: directory, options: options)
    for index in 0..<100 {
        let address = String(format: "AA:BB:CC:DD:%02X:%02X", index / 256, index % 256)
        try await store.keep(KeptConnection(adapter: "hci0", address: address))
        _ = try await store.addSubscription(adapter: "hci0", address: address, characteristic: .uuid("2a37"), mode: .notify)
    }
    for _ in 0..<100_000 { store.append(type: "characteristic-value", device: "AA:BB:CC:DD:EE:01", data: sample) }
    try await store.flush()
    await store.close()
    options.verifyOnOpen = verify
    let clock = ContinuousClock()
    let start = clock.now
    store = try Store.open(directory: directory, options: options)
    let opened = clock.now
    let kept = try await store.keptConnections()
    let subscriptions = try await store.subscriptions()
    let listed = clock.now
    let size = (try? FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int) ?? 0
    let summary = store.eventLogSummary
    await store.close()
    return String(
        format: "| %@ | %.1f ms | %.1f ms | %d + %d | %d events, file %.1f MB |", verify ? "yes" : "no",
        milliseconds(opened - start), milliseconds(listed - opened), kept.count, subscriptions.count, summary.count,
        Double(size) / 1e6)
}

print("")
print("| quick_check on open | open | list kept + subscriptions | restored | log |")
print("|---|---|---|---|---|")
print(try await restore(verify: true))
print(try await restore(verify: false))
