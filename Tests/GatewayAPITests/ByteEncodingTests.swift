import Testing

@testable import GatewayAPI

@Suite struct ByteEncodingTests {
    @Test func hexRoundTripsAndAcceptsCommonSpellings() throws {
        #expect(ByteEncoding.hex.encode([0x0e, 0x77, 0xff]).text == "0e77ff")
        for text in ["0e77ff", "0E77FF", "0x0e77ff", "0e:77:ff", "0e-77-ff", "0e 77 ff"] {
            #expect(try ByteEncoding.hex.decode(text) == [0x0e, 0x77, 0xff], "\(text)")
        }
        #expect(try ByteEncoding.hex.decode("") == [])
    }

    @Test(arguments: ["0e7", "zz", "0x", "0e77g1", "0 e77", "0e::77", ":0e77", "0e77:"])
    func invalidHexIsA400(_ text: String) {
        #expect(throws: Problem.self) { try ByteEncoding.hex.decode(text) }
        do {
            _ = try ByteEncoding.hex.decode(text)
        } catch {
            #expect(error.status == .badRequest)
            #expect(error.invalidParameters?.first?.name == "value")
        }
    }

    @Test func base64AndUTF8() throws {
        #expect(ByteEncoding.base64.encode([0, 1, 2, 3]).text == "AAECAw==")
        #expect(try ByteEncoding.base64.decode("AAECAw==") == [0, 1, 2, 3])
        #expect(throws: Problem.self) { try ByteEncoding.base64.decode("not base64!") }
        #expect(ByteEncoding.utf8.encode(Array("héllo".utf8)) == ("héllo", .utf8))
        #expect(try ByteEncoding.utf8.decode("héllo") == Array("héllo".utf8))
    }

    @Test func bytesThatAreNotUTF8AreGivenInHex() {
        #expect(ByteEncoding.utf8.encode([0xff, 0xfe]) == ("fffe", .hex))
        #expect(ByteEncoding.utf8.members([0xff]).map(\.0) == ["value", "encoding"])
    }

    @Test func encodingParameter() throws {
        #expect(try ByteEncoding(parameter: nil) == .hex)
        #expect(try ByteEncoding(parameter: "Base64") == .base64)
        #expect(throws: Problem.self) { try ByteEncoding(parameter: "binary") }
    }
}
