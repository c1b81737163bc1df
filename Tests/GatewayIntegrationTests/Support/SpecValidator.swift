import Foundation
import TestSupport

/// Validates JSON documents against openapi.yaml's component schemas, with
/// the OpenAPI 3.2 validator from PyPI (openapi-schema-validator): the
/// bodies schemathesis does not see (SSE events, long scans) are held to
/// the same contract.
enum SpecValidator {
    /// The problems found, one line each; empty when every document is valid.
    static func problems(_ documents: [(schema: String, json: String)]) async throws -> [String] {
        let input = try JSONSerialization.data(
            withJSONObject: documents.map { ["schema": $0.schema, "json": $0.json] })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spec-check-\(UUID().uuidString).json")
        try input.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await run([
            "python3", "-c",
            """
            import json, sys, yaml
            from openapi_schema_validator import OAS32Validator
            spec = yaml.safe_load(open(sys.argv[1]))
            for index, item in enumerate(json.load(open(sys.argv[2]))):
                root = dict(spec)
                root["$ref"] = "#/components/schemas/" + item["schema"]
                try:
                    instance = json.loads(item["json"])
                except ValueError as error:
                    print(f"{index} {item['schema']}: not JSON: {error}")
                    continue
                for error in OAS32Validator(root).iter_errors(instance):
                    path = "/".join(str(part) for part in error.absolute_path)
                    print(f"{index} {item['schema']} at /{path}: {error.message}")
            """,
            ContractTests.specPath, file.path,
        ])
        guard result.status == 0 else { return ["validator failed: \(result.error)"] }
        return result.output.split(separator: "\n").map(String.init)
    }
}
