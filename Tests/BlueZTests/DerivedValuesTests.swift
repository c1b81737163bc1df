import Synchronization
import Testing

@testable import BlueZ

/// How many times an entry was made, across tasks.
private final class MakeCount: Sendable {
    let value = Atomic(0)
}

/// An entry of the tests: a name, an integer.
private struct Entry: DerivedKey {
    typealias Value = Int
    let name: String
}

/// Another kind of entry, with a key that equals an `Entry`'s name.
private struct OtherEntry: DerivedKey {
    typealias Value = String
    let name: String
}

@Suite struct DerivedValuesTests {
    @Test func anEntryIsMadeOnceWhateverTheCallers() async {
        let derived = DerivedValues()
        let made = MakeCount()
        let results = await withTaskGroup(of: Int.self) { group in
            for caller in 0..<64 {
                group.addTask {
                    derived.value(for: Entry(name: "frame")) {
                        made.value.add(1, ordering: .relaxed)
                        return caller
                    }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(made.value.load(ordering: .relaxed) == 1)
        #expect(Set(results).count == 1)
    }

    @Test func keysAreSeparateAndValuesDoNotCompareByThem() throws {
        let address = try BluetoothAddress(parsing: "AA:BB:CC:DD:EE:FF")
        let value = CharacteristicValue(
            adapter: "hci0", device: address, service: nil, characteristic: BluetoothUUID(uuid16: 0x2a37), handle: 12,
            value: [6, 72], timestamp: .init(timeIntervalSince1970: 0))
        #expect(value.derived.value(for: Entry(name: "a")) { 1 } == 1)
        #expect(value.derived.value(for: Entry(name: "b")) { 2 } == 2)
        #expect(value.derived.value(for: Entry(name: "a")) { 3 } == 1)
        #expect(value.derived.value(for: OtherEntry(name: "a")) { "x" } == "x", "kinds of entry are separate")
        var copy = value
        #expect(copy.derived === value.derived, "a copy is the same notification")
        copy = CharacteristicValue(
            adapter: "hci0", device: address, service: nil, characteristic: BluetoothUUID(uuid16: 0x2a37), handle: 12,
            value: [6, 72], timestamp: .init(timeIntervalSince1970: 0))
        #expect(copy == value, "equality is the value's, not what was derived from it")
    }
}
