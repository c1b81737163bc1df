import HTTPServer
import Logging
import Testing

@testable import GatewayAPI

@Suite struct RequestIdentityTests {
    @Test(arguments: ["a", "trace-42", "0f8fad5b-d9cb-469f-a165-70867728950e", "x.y:z@w+v=u/t_s", String(repeating: "7", count: 128)])
    func saneIDsAreKept(_ id: String) {
        #expect(RequestIdentity.sanitized(id) == id)
        #expect(RequestIdentity.sanitized(" \(id) ") == id)
    }

    @Test(arguments: ["", " ", "two words", "new\nline", "quote\"", "<script>", "é", String(repeating: "7", count: 129)])
    func otherIDsAreRefused(_ id: String) {
        #expect(RequestIdentity.sanitized(id) == nil)
    }

    @Test func generatedIDsAreSixteenHexDigitsAndDiffer() {
        let ids = (0..<100).map { _ in RequestIdentity.generate() }
        #expect(ids.allSatisfy { $0.count == 16 && $0.allSatisfy(\.isHexDigit) })
        #expect(Set(ids).count == 100)
    }

    /// A problem made inside the middleware, however deep, carries the id;
    /// the metadata provider sees it while the request is served and not after.
    @Test func problemsAndLogMetadataCarryTheID() async throws {
        var router = Router(errorResponses: .problems)
        router.use(RequestIdentity())
        router.get("/fails") { _ in
            #expect(Logger.MetadataProvider.requestID.get()["request_id"] == .string("given-1"))
            throw Problem(.notFound, status: .notFound, detail: "nothing here")
        }
        let response = try await router.respond(
            to: Request(method: .get, target: "/fails", headers: ["X-Request-ID": "given-1"]))
        #expect(response.status == .notFound)
        #expect(response.headers["X-Request-ID"] == "given-1")
        let body = String(decoding: response.body.bytes ?? [], as: UTF8.self)
        #expect(body.contains(#""request_id":"given-1""#), "\(body)")
        let unmatched = try await router.respond(to: Request(method: .get, target: "/nowhere"))
        let generated = unmatched.headers["X-Request-ID"] ?? ""
        #expect(generated.count == 16)
        #expect(String(decoding: unmatched.body.bytes ?? [], as: UTF8.self).contains(generated))
        #expect(Logger.MetadataProvider.requestID.get().isEmpty)
    }
}
