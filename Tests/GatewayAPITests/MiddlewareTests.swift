import HTTPServer
import Testing

@testable import GatewayAPI

@Suite struct MiddlewareTests {
    func router(apiKey: String? = nil, origins: Set<String> = []) -> Router {
        var router = Router(errorResponses: .problems)
        if !origins.isEmpty { router.use(CORSMiddleware(origins: origins)) }
        if let apiKey { router.use(APIKeyMiddleware(key: apiKey)) }
        router.get("/health") { _ in .text("ok") }
        router.get("/v1/adapters") { _ in .text("[]") }
        return router
    }

    @Test func theAPIKeyIsRequiredWhenSet() async throws {
        let router = router(apiKey: "s3cret")
        let missing = try await router.respond(to: Request(method: .get, target: "/v1/adapters"))
        #expect(missing.status == .unauthorized)
        #expect(missing.headers["Content-Type"] == "application/problem+json")
        #expect(missing.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)

        let wrong = try await router.respond(
            to: Request(method: .get, target: "/v1/adapters", headers: ["Authorization": "Bearer s3cre"]))
        #expect(wrong.status == .unauthorized)

        let right = try await router.respond(
            to: Request(method: .get, target: "/v1/adapters", headers: ["Authorization": "bearer s3cret"]))
        #expect(right.status == .ok)

        let query = try await router.respond(to: Request(method: .get, target: "/v1/adapters?access_token=s3cret"))
        #expect(query.status == .ok)

        let health = try await router.respond(to: Request(method: .get, target: "/health"))
        #expect(health.status == .ok)
    }

    @Test func unknownRoutesAreProblems() async throws {
        let response = try await router().respond(to: Request(method: .get, target: "/v1/nothing"))
        #expect(response.status == .notFound)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let body = String(decoding: response.body.bytes ?? [], as: UTF8.self)
        #expect(body.contains(#""type":"urn:blegateway:problem:not-found""#))
        #expect(body.contains(#""instance":"/v1/nothing""#))

        let wrongMethod = try await router().respond(to: Request(method: .delete, target: "/v1/adapters"))
        #expect(wrongMethod.status == .methodNotAllowed)
        #expect(wrongMethod.headers["Allow"]?.contains("GET") == true)
    }

    @Test func corsAnswersPreflightsAndTagsResponses() async throws {
        let router = router(apiKey: "k", origins: ["http://localhost:3000"])
        let preflight = try await router.respond(
            to: Request(
                method: .options, target: "/v1/adapters",
                headers: ["Origin": "http://localhost:3000", "Access-Control-Request-Method": "GET"]))
        #expect(preflight.status == .noContent)
        #expect(preflight.headers["Access-Control-Allow-Origin"] == "http://localhost:3000")
        #expect(preflight.headers["Access-Control-Allow-Headers"]?.contains("Authorization") == true)

        // Even a refusal carries the header, so the browser can read it.
        let refused = try await router.respond(
            to: Request(method: .get, target: "/v1/adapters", headers: ["Origin": "http://localhost:3000"]))
        #expect(refused.status == .unauthorized)
        #expect(refused.headers["Access-Control-Allow-Origin"] == "http://localhost:3000")

        let stranger = try await router.respond(
            to: Request(method: .get, target: "/health", headers: ["Origin": "http://evil.example"]))
        #expect(stranger.headers["Access-Control-Allow-Origin"] == nil)
    }

    /// The router judges a head before its body is read exactly as the
    /// key check will judge the request.
    @Test func theAPIKeyDecidesWhetherABodyIsRead() {
        let router = router(apiKey: "s3cret")
        let admits = { (target: String, headers: Headers) in
            router.admitsBody(of: Request(method: .post, target: target, headers: headers))
        }
        #expect(!admits("/v1/adapters", Headers()))
        #expect(!admits("/v1/adapters", ["Authorization": "Bearer s3cre"]))
        #expect(admits("/v1/adapters", ["Authorization": "Bearer s3cret"]))
        #expect(admits("/v1/adapters?access_token=s3cret", Headers()))
        #expect(admits("/health", Headers()))
        #expect(router.admitsBody(of: Request(method: .options, target: "/v1/adapters")))
        #expect(self.router().admitsBody(of: Request(method: .post, target: "/v1/adapters")))
    }

    @Test func constantTimeComparison() {
        #expect(APIKeyMiddleware.constantTimeEquals(Array("abc".utf8), Array("abc".utf8)))
        #expect(!APIKeyMiddleware.constantTimeEquals(Array("abc".utf8), Array("abd".utf8)))
        #expect(!APIKeyMiddleware.constantTimeEquals(Array("abc".utf8), Array("abcd".utf8)))
        #expect(!APIKeyMiddleware.constantTimeEquals([], Array("a".utf8)))
    }
}
