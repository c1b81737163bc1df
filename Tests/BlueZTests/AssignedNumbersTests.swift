import Testing

@testable import BlueZ

@Suite struct AssignedNumbersTests {
    @Test(arguments: [
        ("180d", "Heart Rate", BluetoothUUID.Kind.service),
        ("0000180F-0000-1000-8000-00805F9B34FB", "Battery Service", .service),
        ("2a37", "Heart Rate Measurement", .characteristic),
        ("2902", "Client Characteristic Configuration", .descriptor),
        ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", "Nordic UART Service", .service),
        ("6e400002-b5a3-f393-e0a9-e50e24dcca9e", "UART RX Characteristic", .characteristic),
        // bluetooth-numbers 1.1.2 misprints member UUIDs (0x65173 for 0xFE95);
        // the generator corrects them.
        ("fe95", "Xiaomi Inc.", .memberService),
    ])
    func knownNames(_ text: String, _ name: String, _ kind: BluetoothUUID.Kind) throws {
        let uuid = try BluetoothUUID(parsing: text)
        #expect(uuid.name == name)
        #expect(uuid.kind == kind)
        #expect(uuid.name(as: kind) == name)
    }

    @Test func aUUIDWithNamesOfSeveralKinds() throws {
        let eddystone = try BluetoothUUID(parsing: "feaa")
        #expect(eddystone.name == "Eddystone")
        #expect(eddystone.kind == .service)
        #expect(eddystone.name(as: .memberService) == "Google LLC")
        #expect(eddystone.name(as: .characteristic) == nil)
    }

    @Test func unknownUUIDsHaveNoName() throws {
        let uuid = try BluetoothUUID(parsing: "12345678-1234-5678-1234-567812345678")
        #expect(uuid.name == nil)
        #expect(uuid.kind == nil)
        #expect(BluetoothUUID(uuid16: 0x0000).name == nil)
    }

    @Test func companyNames() {
        #expect(CompanyIdentifier.name(for: 0x004C) == "Apple, Inc.")
        #expect(CompanyIdentifier(0x0059).name == "Nordic Semiconductor ASA")
        #expect(CompanyIdentifier(0x0000).name == "Ericsson AB")
        #expect(CompanyIdentifier(0xFFFE).name == nil)
        #expect(CompanyIdentifier(0x004C).description == "0x004C")
    }

    /// Every line of the generated tables parses: a malformed line would be
    /// skipped silently at run time.
    @Test func everyTableLineParses() {
        let uuidLines = AssignedNumbers.uuidTable.split(separator: "\n").count
        #expect(AssignedNumbers.uuidNames.values.map(\.count).reduce(0, +) == uuidLines)
        #expect(uuidLines > 1_000)
        let companyLines = AssignedNumbers.companyTable.split(separator: "\n").count
        #expect(AssignedNumbers.companyNames.count == companyLines)
        #expect(companyLines > 3_000)
    }
}
