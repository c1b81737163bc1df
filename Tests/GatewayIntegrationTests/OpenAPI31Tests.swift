import Foundation
import TestSupport
import Testing

/// openapi-3.1.yaml, the 3.1 edition of openapi.yaml for client
/// generators: made by scripts/openapi-3.1.py, valid 3.1, with the same
/// operations, served at /openapi-3.1.yaml, and two generators make clients
/// from it that drop no operation.
@Suite struct OpenAPI31Tests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let editionPath = root.appendingPathComponent("openapi-3.1.yaml").path

    @Test func theCommittedEditionIsTheScriptsOutput() async throws {
        let made = try await run(["python3", Self.root.appendingPathComponent("scripts/openapi-3.1.py").path, "--stdout"])
        #expect(made.status == 0, "\(made.error)")
        let committed = try String(contentsOfFile: Self.editionPath, encoding: .utf8)
        #expect(made.output == committed, "openapi-3.1.yaml is stale: run scripts/embed-openapi.sh")
    }

    @Test func theEditionIsValidOpenAPI31WithTheSameOperations() async throws {
        let result = try await run([
            "python3", "-c",
            """
            import json, sys, yaml
            from openapi_spec_validator import validate
            edition = yaml.safe_load(open(sys.argv[1]))
            validate(edition)
            def operations(document):
                return sorted(
                    f"{method.upper()} {path} {operation['operationId']}"
                    for path, item in document["paths"].items()
                    for method, operation in item.items() if method in ("get", "put", "post", "patch", "delete"))
            original = yaml.safe_load(open(sys.argv[2]))
            streams = [
                media for item in edition["paths"].values() for operation in item.values() if isinstance(operation, dict)
                for response in operation.get("responses", {}).values()
                for name, media in response.get("content", {}).items() if name == "text/event-stream"]
            print(json.dumps({
                "version": edition["openapi"], "same": operations(edition) == operations(original),
                "streams": len(streams), "item_schemas": sum("itemSchema" in media for media in streams),
                "string_streams": sum(media["schema"]["type"] == "string" and "Events" in media["schema"]["description"] for media in streams),
            }))
            """,
            Self.editionPath, ContractTests.specPath,
        ])
        #expect(result.status == 0, "\(result.error)")
        let summary = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any] ?? [:]
        #expect(summary["version"] as? String == "3.1.1")
        #expect(summary["same"] as? Bool == true)
        #expect(summary["streams"] as? Int == 6)
        #expect(summary["item_schemas"] as? Int == 0)
        #expect(summary["string_streams"] as? Int == 6)
    }

    @Test func theGatewayServesTheEdition() async throws {
        let gateway = try await GatewayUnderTest.start()
        let served = try await gateway.get("/openapi-3.1.yaml")
        #expect(served.status == 200)
        #expect(served.contentType == "application/yaml")
        #expect(served.text == (try String(contentsOfFile: Self.editionPath, encoding: .utf8)))
        #expect(await gateway.stop() == 0)
    }

    /// openapi-python-client and OpenAPI Generator (its python generator),
    /// with their spec validation on (Tests/openapi/check_generated_clients.py).
    @Test(.timeLimit(.minutes(10))) func twoGeneratorsMakeClientsWithEveryOperation() async throws {
        let work = NSTemporaryDirectory() + "generated-clients-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try await run(
            ["python3", Self.root.appendingPathComponent("Tests/openapi/check_generated_clients.py").path, Self.editionPath, work],
            timeout: .seconds(560))
        #expect(result.status == 0, "\(result.output)\n\(result.error.suffix(6000))")
        let report = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any] ?? [:]
        let total = report["operations"] as? Int ?? 0
        #expect(total > 40)
        for generator in ["openapi-python-client", "openapi-generator"] {
            let entry = report[generator] as? [String: Any] ?? [:]
            #expect(entry["operations"] as? Int == total, "\(generator): \(entry)")
        }
    }
}
