import Foundation
import Testing

@testable import GatewayAPI

@Suite struct JSONStringTests {
    @Test func stringsAreEscapedAsRFC8259AsksAndOtherwiseCopied() throws {
        let cases: [(String, String)] = [
            ("C4:7C:8D:6A:3E:01", #""C4:7C:8D:6A:3E:01""#),
            ("Sensor ° 1", #""Sensor ° 1""#),
            ("say \"hi\"", #""say \"hi\"""#),
            ("back\\slash", #""back\\slash""#),
            ("line\nbreak\r\ttab", #""line\nbreak\r\ttab""#),
            ("bell\u{07}", #""bell\u0007""#),
            ("", #""""#),
        ]
        for (value, expected) in cases {
            #expect(JSON.string(value).text == expected)
            // What the gateway writes parses back to the string.
            let parsed = try JSONSerialization.jsonObject(with: Data(expected.utf8), options: .fragmentsAllowed)
            #expect(parsed as? String == value)
        }
    }
}
