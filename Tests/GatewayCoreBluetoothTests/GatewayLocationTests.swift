import Foundation
import GatewayCoreBluetooth
import Testing

/// Where a manager finds its gateway: the options first, then the
/// environment, then the default.
@Suite struct GatewayLocationTests {
    @Test func theOptionsComeBeforeTheEnvironment() throws {
        let environment = ["BLEGATEWAY_URL": "http://hall.lan:8080", "BLEGATEWAY_API_KEY": "k1", "BLEGATEWAY_FLEET": "1"]
        let fromEnvironment = try GatewayLocation(options: nil, environment: environment)
        #expect(fromEnvironment.url.absoluteString == "http://hall.lan:8080")
        #expect(fromEnvironment.apiKey == "k1")
        #expect(fromEnvironment.fleet)
        let fromOptions = try GatewayLocation(
            options: [
                CBManagerOptionGatewayURLKey: "http://attic.lan:8081", CBManagerOptionGatewayAPIKeyKey: "k2",
                CBManagerOptionGatewayFleetKey: false,
            ],
            environment: environment)
        #expect(fromOptions.url.absoluteString == "http://attic.lan:8081")
        #expect(fromOptions.apiKey == "k2")
        #expect(!fromOptions.fleet)
    }

    @Test func byDefaultTheLocalGatewayAloneWithoutAKey() throws {
        let location = try GatewayLocation(options: nil, environment: ["BLEGATEWAY_FLEET": "0", "BLEGATEWAY_API_KEY": ""])
        #expect(location.url.absoluteString == GatewayLocation.defaultURL)
        #expect(location.apiKey == nil)
        #expect(!location.fleet)
    }

    @Test func aURLThatIsNotAGatewaysIsNamedInTheError() {
        #expect(throws: GatewayError.self) { try GatewayLocation(options: [CBManagerOptionGatewayURLKey: "ftp://x"], environment: [:]) }
    }
}
