import Testing

@testable import DBus

@Suite struct SignatureTests {
    @Test(arguments: ["", "s", "a{sv}", "a{oa{sa{sv}}}", "(yqs)", "aay", "a(oa{sv})", "hv", "a{qv}"])
    func acceptsValidSignatures(_ text: String) throws {
        let signature = try Signature(text)
        #expect(signature.rawValue == text)
        #expect(Signature(types: signature.types).rawValue == text)
    }

    @Test(arguments: [
        "a", "{sv}", "a{vs}", "a{s}", "a{sss}", "()", "(s", "s)", "z", "a{(s)v}",
        String(repeating: "a", count: 33) + "y", String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33),
        String(repeating: "y", count: 256),
    ])
    func rejectsInvalidSignatures(_ text: String) {
        #expect(throws: DBusError.self) { try Signature(text) }
    }
}
