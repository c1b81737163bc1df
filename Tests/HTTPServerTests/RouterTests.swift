import HTTPServer
import Synchronization
import Testing

/// The router alone, without sockets.
extension HTTPServerTests {
    @Suite struct Routing {
        static func ok(_ tag: String) -> Handler { { request in .text("\(tag) \(request.parameters.map { "\($0.name)=\($0.value)" }.joined(separator: ","))") } }

        static func router() -> Router {
            var router = Router()
            router.get("/v1/devices", use: ok("list"))
            router.get("/v1/devices/{address}", use: ok("device"))
            router.delete("/v1/devices/{address}", use: ok("forget"))
            router.post("/v1/devices/scan", use: ok("scan"))
            router.get("/v1/devices/{address}/characteristics/{char}/value", use: ok("read"))
            router.put("/v1/devices/{address}/characteristics/{char}/value", use: ok("write"))
            return router
        }

        static func respond(_ router: Router, _ method: Method, _ target: String) async throws -> (Response, String) {
            let response = try await router.respond(to: Request(method: method, target: target))
            guard case .bytes(let bytes) = response.body else { return (response, "<stream>") }
            return (response, String(decoding: bytes, as: UTF8.self))
        }

        @Test func matchesLiteralsAndParameters() async throws {
            let router = Self.router()
            #expect(try await Self.respond(router, .get, "/v1/devices").1 == "list ")
            #expect(try await Self.respond(router, .get, "/v1/devices/AA:BB").1 == "device address=AA:BB")
            #expect(try await Self.respond(router, .put, "/v1/devices/AA/characteristics/2a37/value").1 == "write address=AA,char=2a37")
            #expect(try await Self.respond(router, .get, "/v1/devices/a%2Fb").1 == "device address=a/b")
            #expect(try await Self.respond(router, .get, "/v1/devices/").1 == "list ")
        }

        @Test func literalSegmentWinsOverParameter() async throws {
            let router = Self.router()
            #expect(try await Self.respond(router, .post, "/v1/devices/scan").1 == "scan ")
            // The literal path exists, so the wrong method is 405, not the
            // parameter route.
            let (response, _) = try await Self.respond(router, .get, "/v1/devices/scan")
            #expect(response.status == .methodNotAllowed)
            #expect(response.headers["allow"] == "OPTIONS, POST")
        }

        @Test func unknownPathIs404AndWrongMethodIs405WithAllow() async throws {
            let router = Self.router()
            #expect(try await Self.respond(router, .get, "/v2/nothing").0.status == .notFound)
            #expect(try await Self.respond(router, .get, "/v1/devices/AA/characteristics").0.status == .notFound)
            let (response, _) = try await Self.respond(router, .post, "/v1/devices/AA")
            #expect(response.status == .methodNotAllowed)
            #expect(response.headers["Allow"] == "DELETE, GET, HEAD, OPTIONS")
        }

        @Test func headUsesGetRoutesAndOptionsListsMethods() async throws {
            let router = Self.router()
            let (head, body) = try await Self.respond(router, .head, "/v1/devices/AA")
            #expect(head.status == .ok)
            #expect(body == "device address=AA", "the server, not the router, drops HEAD bodies")
            let (options, _) = try await Self.respond(router, .options, "/v1/devices/AA")
            #expect(options.status == .noContent)
            #expect(options.headers["Allow"] == "DELETE, GET, HEAD, OPTIONS")
            #expect(try await Self.respond(router, .options, "/nowhere").0.status == .notFound)
        }

        @Test func optionsHandlerCanBeReplaced() async throws {
            var router = Self.router()
            router.optionsHandler = { _, allowed in
                Response(status: .ok, headers: ["Access-Control-Allow-Methods": allowed.map(\.rawValue).joined(separator: ",")])
            }
            let (response, _) = try await Self.respond(router, .options, "/v1/devices")
            #expect(response.status == .ok)
            #expect(response.headers["Access-Control-Allow-Methods"] == "GET,HEAD,OPTIONS")
        }

        @Test func middlewareWrapsInOrderAndSeesRouteAndErrors() async throws {
            let log = Mutex<[String]>([])
            var router = Self.router()
            router.use { request, next in
                log.withLock { $0.append("outer in \(request.route ?? "-")") }
                var response = try await next(request)
                response.headers["X-Outer"] = "1"
                log.withLock { $0.append("outer out \(response.status.code)") }
                return response
            }
            router.use(ClosureMiddleware { request, next in
                log.withLock { $0.append("inner in \(request.parameters["address"] ?? "-")") }
                return try await next(request)
            })
            let (found, _) = try await Self.respond(router, .get, "/v1/devices/AA")
            let (missing, _) = try await Self.respond(router, .get, "/missing")
            #expect(found.headers["X-Outer"] == "1")
            #expect(missing.status == .notFound)
            #expect(missing.headers["X-Outer"] == "1", "middleware sees 404 responses too")
            #expect(log.withLock { $0 } == [
                "outer in /v1/devices/{address}", "inner in AA", "outer out 200",
                "outer in -", "inner in -", "outer out 404",
            ])
        }

        @Test func middlewareCanAnswerAlone() async throws {
            var router = Self.router()
            router.use { request, next in
                guard request.headers["Authorization"] == "Bearer secret" else { throw HTTPError(.unauthorized, "no token") }
                return try await next(request)
            }
            #expect(try await Self.respond(router, .get, "/v1/devices").0.status == .unauthorized)
            let request = Request(method: .get, target: "/v1/devices", headers: ["authorization": "Bearer secret"])
            #expect(try await router.respond(to: request).status == .ok)
        }

        @Test func errorResponsesAreCustomisable() async throws {
            var router = Self.router()
            router.errorResponses = ErrorResponseFactory { error, request in
                .text("problem \(error.status.code) \(request?.path ?? "")", status: error.status, contentType: "application/problem+json")
            }
            router.get("/boom") { _ in throw HTTPError(.conflict, "busy") }
            let (missing, missingBody) = try await Self.respond(router, .get, "/missing")
            #expect(missingBody == "problem 404 /missing")
            #expect(missing.headers["Content-Type"] == "application/problem+json")
            let (wrong, wrongBody) = try await Self.respond(router, .patch, "/v1/devices")
            #expect(wrongBody == "problem 405 /v1/devices")
            #expect(wrong.headers["Allow"] == "GET, HEAD, OPTIONS", "the factory's response still gets Allow")
            #expect(try await Self.respond(router, .get, "/boom").1 == "problem 409 /boom")
        }

        @Test func listsRoutesInOrder() {
            var router = Self.router()
            router.get("/v1/devices", use: Self.ok("again"))  // replaces, keeps one entry
            #expect(router.routes.map(\.description) == [
                "GET /v1/devices/{address}", "DELETE /v1/devices/{address}", "POST /v1/devices/scan",
                "GET /v1/devices/{address}/characteristics/{char}/value",
                "PUT /v1/devices/{address}/characteristics/{char}/value", "GET /v1/devices",
            ])
        }
    }
}
