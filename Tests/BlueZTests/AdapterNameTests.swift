import Testing

@testable import BlueZ

@Suite struct AdapterNameTests {
    @Test(arguments: ["hci0", "hci1", "hci12", "hci123", "hci1234", "hci9999"])
    func acceptsTheKernelsIndices(_ name: String) throws {
        #expect(AdapterName.isValid(name))
        #expect(try AdapterName.validate(name) == name)
    }

    @Test(arguments: [
        "", "hci", "hci12345", "HCI0", "hci-1", "hci 0", "hci0 ", "hcia", "hci٣", "hci１", "bluetooth0", "xhci0",
        "/org/bluez/hci0",
    ])
    func refusesEverythingElse(_ name: String) {
        #expect(!AdapterName.isValid(name))
        #expect { try AdapterName.validate(name) } throws: { error in
            (error as? ParseError)?.code == .invalidAdapterName && (error as? ParseError)?.message.contains("'\(name)'") == true
        }
    }
}
