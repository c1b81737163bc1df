extension AssignedNumbers {
    /// One name a UUID has in the tables.
    struct UUIDEntry: Sendable, Hashable {
        let kind: BluetoothUUID.Kind
        let name: String
    }

    /// Every UUID's names, in table order (service, characteristic,
    /// descriptor, member service). Parsed once, at first use: a `static let`
    /// is initialised lazily and thread-safely.
    static let uuidNames: [BluetoothUUID: [UUIDEntry]] = {
        var names: [BluetoothUUID: [UUIDEntry]] = [:]
        for line in uuidTable.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, let kind = kinds[String(fields[0])],
                  let uuid = BluetoothUUID(String(fields[1]))
            else { continue } // A malformed line; the tests assert there are none.
            names[uuid, default: []].append(UUIDEntry(kind: kind, name: String(fields[2])))
        }
        return names
    }()

    /// Company names by identifier. Parsed once, at first use.
    static let companyNames: [UInt16: String] = {
        var names: [UInt16: String] = [:]
        for line in companyTable.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 1)
            guard fields.count == 2, fields[0].utf8.count == 4,
                  let identifier = UInt16(fields[0], radix: 16)
            else { continue } // A malformed line; the tests assert there are none.
            names[identifier] = String(fields[1])
        }
        return names
    }()

    /// The kind letters of `uuidTable`.
    private static let kinds: [String: BluetoothUUID.Kind] = [
        "s": .service, "c": .characteristic, "d": .descriptor, "m": .memberService,
    ]
}
