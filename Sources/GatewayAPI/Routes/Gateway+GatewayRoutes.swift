import HTTPServer

extension Gateway {
    func addGatewayRoutes(to router: inout Router) {
        router.get("/health") { [central, configuration] _ in
            let report = HealthReport(central: central, defaultAdapter: configuration.defaultAdapter)
            return .json(report.json, status: report.httpStatus)
        }
        router.get("/openapi.yaml") { _ in
            .bytes(OpenAPIDocument.bytes, contentType: "application/yaml")
        }
        router.get("/openapi-3.1.yaml") { _ in
            .bytes(OpenAPIDocument.bytes31, contentType: "application/yaml")
        }
        router.get("/v1") { [self] _ in
            .json(
                .object([
                    ("name", .string("blegateway")),
                    ("version", .string(configuration.version)),
                    (
                        "bluez",
                        .object([
                            ("available", .bool(central.isBluetoothdRunning)),
                            ("simulated", .bool(configuration.simulated)),
                        ])
                    ),
                    ("adapters", .array(adapterJSON(central.adapters()))),
                ]))
        }
    }
}
