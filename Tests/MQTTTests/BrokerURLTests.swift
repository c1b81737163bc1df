import MQTT
import Testing

@Suite struct BrokerURLTests {
    @Test func parsesSchemesHostsPortsAndCredentials() throws {
        let plain = try BrokerURL(parsing: "mqtt://broker.local")
        #expect(plain.host == "broker.local" && plain.port == 1883 && !plain.usesTLS && plain.username == nil)
        let tls = try BrokerURL(parsing: "mqtts://broker.local")
        #expect(tls.port == 8883 && tls.usesTLS)
        let full = try BrokerURL(parsing: "mqtt://gw%40home:s3cr%3At@10.0.0.2:1884/")
        #expect(full.host == "10.0.0.2" && full.port == 1884)
        #expect(full.username == "gw@home" && full.password == "s3cr:t")
        #expect(full.description == "mqtt://gw@home@10.0.0.2:1884")
        let six = try BrokerURL(parsing: "mqtt://[::1]:1999")
        #expect(six.host == "::1" && six.port == 1999 && six.description == "mqtt://[::1]:1999")
        let userOnly = try BrokerURL(parsing: "mqtt://gateway@h")
        #expect(userOnly.username == "gateway" && userOnly.password == nil)
    }

    @Test(arguments: [
        "http://h", "mqtt://", "mqtt://h:0", "mqtt://h:65536", "mqtt://h:x", "mqtt://h/path", "mqtt://[::1",
        "mqtt://[::1]x", "mqtt://u%zz@h",
    ])
    func rejects(_ text: String) {
        #expect(throws: MQTTError.self) { try BrokerURL(parsing: text) }
    }
}
