import BlueZ
import GatewayCore
import HTTPServer

extension Gateway {
    func addDeviceRoutes(to router: inout Router) {
        router.get("/v1/devices") { [self] request in
            let adapter = try request.adapterQuery(default: nil)
            if let adapter { _ = try central.adapter(adapter) }
            try Problem.requireBlueZ(central)
            let services = try request.uuidList("service")
            let encoding = try request.encoding()
            let devices = central.devices(adapter: adapter, connected: try request.bool("connected")).filter { device in
                services.isEmpty || services.contains(where: device.advertisement.serviceUUIDs.contains)
            }
            return .json(.array(devices.map { ModelJSON.device($0, encoding: encoding) }))
        }
        router.get("/v1/devices/{address}") { [self] request in
            let (address, adapter) = try deviceTarget(request)
            let encoding = try request.encoding()
            do {
                return .json(ModelJSON.device(try central.device(address, adapter: adapter), encoding: encoding))
            } catch let error as BlueZError where error.code == .notFound {
                // A kept device is known even while bluetoothd does not
                // list it (restarting, or the device out of range): never
                // a 404 for it. While BlueZ is gone the call above says 503.
                guard let kept = try? keptAdapter(address, adapter), let device = keeper.lastKnown(address, adapter: kept)
                else { throw error }
                return .json(ModelJSON.device(device, encoding: encoding))
            }
        }
        router.delete("/v1/devices/{address}") { [self] request in
            let (address, adapter) = try deviceTarget(request)
            let timeout = try request.timeout(maximum: configuration.maximumTimeout)
            try await central.remove(address, adapter: adapter, timeout: timeout)
            return Response(status: .noContent)
        }
        router.post("/v1/devices/{address}/connect") { [self] request in
            let command = ConnectCommand(
                device: try commandTarget(request), timeout: try request.timeout(maximum: configuration.maximumTimeout))
            return .json(CommandJSON.device(try await core.connect(command)))
        }
        router.post("/v1/devices/{address}/disconnect") { [self] request in
            let command = DisconnectCommand(
                device: try commandTarget(request), timeout: try request.timeout(maximum: configuration.maximumTimeout))
            return .json(CommandJSON.device(try await core.disconnect(command)))
        }
    }

    /// The device of a `/v1/devices/{address}` route and its adapter.
    func deviceTarget(_ request: Request) throws(Problem) -> (BluetoothAddress, String?) {
        let target = try commandTarget(request)
        return (target.address, target.adapter)
    }

    /// The device of a `/v1/devices/{address}` route, for a core command:
    /// `?adapter=` or the gateway's default adapter.
    func commandTarget(_ request: Request) throws(Problem) -> DeviceTarget {
        DeviceTarget(address: try request.address(), adapter: try request.adapterQuery(default: configuration.defaultAdapter))
    }
}
