import HTTPServer
import Testing

@testable import GatewayAPI

/// `?buffer_kib=` on a stream: how much the gateway holds for a client that
/// has not read yet before it drops the client.
@Suite struct StreamBufferTests {
    func buffer(_ query: String, maximum: Int = 16 * 1024 * 1024) throws(Problem) -> Int {
        var configuration = GatewayConfiguration()
        configuration.maximumStreamBufferBytes = maximum
        return try configuration.streamConfiguration(for: Request(method: .get, target: "/v1/events" + query))
            .maxBufferedBytes
    }

    @Test func aStreamHoldsTheDefaultUnlessItsClientAsks() throws {
        #expect(try buffer("") == 256 * 1024)
        #expect(try buffer("?buffer_kib=4096") == 4096 * 1024)
        #expect(try buffer("?buffer_kib=16") == 16 * 1024, "a client may ask for less, to be dropped sooner")
    }

    @Test func moreThanTheGatewayAllowsIsCappedToIt() throws {
        #expect(try buffer("?buffer_kib=1000000", maximum: 1024 * 1024) == 1024 * 1024)
        #expect(try buffer("?buffer_kib=1000000", maximum: 1024) == 256 * 1024, "never below the default")
    }

    @Test(arguments: ["0", "-1", "lots", "1073741825", ""])
    func whatIsNotASizeIsABadRequest(_ value: String) {
        #expect {
            try buffer("?buffer_kib=\(value)")
        } throws: { error in
            (error as? Problem)?.status == .badRequest && (error as? Problem)?.invalidParameters?.first?.name == "buffer_kib"
        }
    }
}
