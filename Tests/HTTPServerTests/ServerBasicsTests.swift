import Foundation
import HTTPServer
import Synchronization
import Testing

extension HTTPServerTests {
    @Suite struct ServerBasics {
        static func echoRouter() -> Router {
            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            router.get("/v1/devices/{address}/characteristics/{char}/value") { request in
                .text("\(request.parameters["address"] ?? "-") \(request.parameters["char"] ?? "-") \(request.route ?? "-")")
            }
            router.get("/query") { request in
                .text(request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "|"))
            }
            router.post("/echo") { request in
                .bytes(request.body, contentType: request.headers["content-type"] ?? "application/octet-stream")
            }
            router.get("/remote") { request in .text(request.remoteAddress?.host ?? "none") }
            router.get("/fail") { _ in throw CocoaError(.featureUnsupported) }
            return router
        }

        @Test func servesRoutesWithParametersOverCurl() async throws {
            try await withServer(Self.echoRouter()) { _, port in
                let health = try await curl(["http://127.0.0.1:\(port)/health"])
                #expect(health.output == "ok\n")
                let value = try await curl(["http://127.0.0.1:\(port)/v1/devices/AA:BB:CC:DD:EE:FF/characteristics/2a37/value"])
                #expect(value.output == "AA:BB:CC:DD:EE:FF 2a37 /v1/devices/{address}/characteristics/{char}/value")
            }
        }

        @Test func decodesRepeatedQueryItems() async throws {
            try await withServer(Self.echoRouter()) { _, port in
                let result = try await curl(["http://127.0.0.1:\(port)/query?a=1&b=x%20y&a=2&c=%E2%9C%93&plus=a+b&flag"])
                #expect(result.output == "a=1|b=x y|a=2|c=✓|plus=a b|flag=")
            }
        }

        @Test func echoesBodyAndReportsRemoteAddress() async throws {
            try await withServer(Self.echoRouter()) { _, port in
                let echo = try await curl([
                    "-H", "Content-Type: text/plain", "--data-binary", "hello body", "http://127.0.0.1:\(port)/echo",
                ])
                #expect(echo.output == "hello body")
                let remote = try await curl(["http://127.0.0.1:\(port)/remote"])
                #expect(remote.output == "127.0.0.1")
            }
        }

        @Test func unknownPathIs404AndWrongMethodIs405WithAllow() async throws {
            try await withServer(Self.echoRouter()) { _, port in
                let missing = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/nope"])
                #expect(missing.output == "404")
                let wrong = try await blocking {
                    let client = try RawClient(port: port)
                    try client.request("DELETE", "/health")
                    return try client.readResponse()
                }
                #expect(wrong.head.status == 405)
                #expect(wrong.head.header("Allow") == "GET, HEAD, OPTIONS")
            }
        }

        @Test func handlerErrorIs500() async throws {
            try await withServer(Self.echoRouter()) { _, port in
                let result = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/fail"])
                #expect(result.output == "500")
            }
        }

        @Test func headHasGetHeadersAndNoBody() async throws {
            try await withServer(Self.echoRouter()) { _, port in
                let (get, head) = try await blocking {
                    let client = try RawClient(port: port)
                    try client.request("GET", "/health")
                    let get = try client.readResponse()
                    try client.request("HEAD", "/health")
                    let head = try client.readResponse(head: true)
                    // Nothing may follow the HEAD response's headers: the next
                    // response on the connection must start right away.
                    try client.request("GET", "/health")
                    #expect(try client.readResponse().text == "ok\n")
                    return (get, head)
                }
                #expect(head.head.status == 200)
                #expect(head.head.header("Content-Length") == "3")
                #expect(head.head.header("Content-Type") == get.head.header("Content-Type"))
            }
        }
    }
}
