import BlueZ
import HTTPServer

extension Gateway {
    func addAdapterRoutes(to router: inout Router) {
        router.get("/v1/adapters") { [self] _ in
            try Problem.requireBlueZ(central)
            return .json(.array(adapterJSON(central.adapters())))
        }
        router.get("/v1/adapters/{adapter}") { [self] request in
            let name = try request.adapterName()
            return .json(adapterJSON([try central.adapter(name)])[0])
        }
        router.patch("/v1/adapters/{adapter}") { [self] request in
            let name = try request.adapterName()
            let body = try JSONBody(request, allowed: ["powered"])
            guard let powered = try body["powered"].bool() else {
                throw Problem.invalidParameter("powered", "is required (true or false)")
            }
            let timeout = try request.timeout(maximum: configuration.maximumTimeout) ?? configuration.defaultTimeout
            let adapter = try await central.setPowered(powered, adapter: name, timeout: timeout)
            return .json(adapterJSON([adapter])[0])
        }
    }
}

extension Gateway {
    /// Adapters as JSON, each with its connection slots.
    func adapterJSON(_ adapters: [Adapter]) -> [JSON] {
        let slots = Dictionary(central.connectionSlots().map { ($0.adapter, $0) }) { first, _ in first }
        return adapters.map { ModelJSON.adapter($0, slots: slots[$0.id]) }
    }
}

extension Request {
    /// The adapter named in the path.
    func adapterName() throws(Problem) -> String {
        let name = pathParameter("adapter")
        try Self.checkAdapterName(name, parameter: "adapter")
        return name
    }
}

extension Problem {
    /// A 503 `bluetoothd-unavailable` unless BlueZ can be reached.
    static func requireBlueZ(_ central: Central) throws(Problem) {
        let availability = central.availability
        guard availability == .available else {
            throw Problem(.bluetoothdUnavailable, status: .serviceUnavailable, detail: availability.detail)
        }
    }
}
