import HTTPServer
import Testing

extension HTTPServerTests {
    /// `--listen` as people write it, read without a socket.
    @Suite struct ListenAddressParsing {
        @Test(arguments: [
            ("127.0.0.1:8080", "127.0.0.1", 8080),
            ("0.0.0.0:0", "0.0.0.0", 0),
            ("8080", "127.0.0.1", 8080),
            ("localhost:80", "localhost", 80),
            ("[::1]:8443", "::1", 8443),
            ("[::]:8080", "::", 8080),
        ])
        func readsEachForm(_ text: String, host: String, port: Int) {
            #expect(SocketAddress(parsing: text) == SocketAddress(host: host, port: port))
        }

        @Test(arguments: ["", "::1:8080", "[::1]8080", "host:", ":8080", "host:65536", "host:-1", "host:http", "[]:80"])
        func refusesWhatIsNoAddress(_ text: String) {
            #expect(SocketAddress(parsing: text) == nil)
        }

        @Test func printsIPv6InBrackets() {
            #expect(SocketAddress(host: "::1", port: 8080).description == "[::1]:8080")
            #expect(SocketAddress(host: "127.0.0.1", port: 8080).description == "127.0.0.1:8080")
        }
    }
}
