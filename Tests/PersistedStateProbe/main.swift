// persisted-state-probe: the store in a process of its own, for tests that
// must kill it or run it as another user.
//
//   persisted-state-probe open DIR      open the store, print "opened", close
//   persisted-state-probe append DIR    keep a connection, then append events
//                                       until killed, printing "committed ID"
//                                       each time the commit of ID returned
import Glibc
import PersistedState

/// Writes a line to standard output at once (no buffering to lose on a kill).
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

func fail(_ line: String) -> Never {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: persisted-state-probe open|append DIR") }
let directory = arguments[2]

switch arguments[1] {
case "open":
    do {
        let store = try Store.open(directory: directory)
        say("opened next=\(store.nextEventID)")
        await store.close()
    } catch {
        fail(error.message)
    }

case "append":
    let store: Store
    do {
        // Nothing pruned: the test checks every id from the first, and a
        // test slowed by a loaded machine may let this run append far past
        // the default 100,000 events before it kills it.
        var options = StoreOptions()
        options.maximumEventCount = 100_000_000
        store = try Store.open(directory: directory, options: options)
        try await store.keep(KeptConnection(adapter: "hci0", address: "AA:BB:CC:DD:EE:01", options: Array(#"{"give_up":null}"#.utf8)))
    } catch {
        fail(error.message)
    }
    say("started next=\(store.nextEventID)")
    // The producer appends without waiting, at most 20 events a
    // millisecond (a busy notification path; a producer with no limit at all
    // would outrun any disk and fill the queue); the acknowledger waits for
    // the newest id's commit over and over, and says so only after it
    // returned.
    let producer = Task.detached {
        var sequence = 0
        while !Task.isCancelled {
            for _ in 0..<20 {
                sequence += 1
                store.append(
                    type: "characteristic-value", device: "AA:BB:CC:DD:EE:01",
                    data: Array(#"{"sequence":\#(sequence)}"#.utf8))
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
    while true {
        let newest = store.nextEventID - 1
        guard newest > 0 else {
            await Task.yield()
            continue
        }
        do {
            try await store.waitUntilCommitted(newest)
        } catch {
            fail(error.message)
        }
        say("committed \(newest)")
    }
    _ = producer

default:
    fail("unknown command \(arguments[1])")
}
