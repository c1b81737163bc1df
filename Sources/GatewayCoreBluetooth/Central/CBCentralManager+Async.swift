import Foundation

/// One advertisement a scan found, for `for try await` loops.
public struct CBDiscovery: Sendable {
    public var peripheral: CBPeripheral
    /// The advertisement as the gateway decoded it (`advertisementData`
    /// gives Core Bluetooth's dictionary).
    public var device: GatewayJSON.Device
    public var rssi: Int { device.rssi ?? 127 }
    public var advertisementData: [String: Any] { CBCentralManager.advertisementData(device) }
}

// Async/await beside the delegate API, for new code. They use the same
// gateway calls and objects; they do not call the delegates.
extension CBCentralManager {
    /// Scans while the sequence is iterated: one element per peripheral
    /// (per advertisement with `allowDuplicates`).
    public func discoveries(withServices serviceUUIDs: [CBUUID]?, allowDuplicates: Bool = false) async throws(CBError)
        -> AsyncThrowingStream<CBDiscovery, any Error>
    {
        guard let gateway else { throw CBError(.unknown, detail: lastGatewayError?.detail ?? "no gateway") }
        let reports: ScanReports
        do {
            reports = try await ScanReports.open(
                gateway, fleet: fleet, adapterQuery: adapterQuery, services: serviceUUIDs, duplicates: allowDuplicates)
        } catch {
            throw CBError(.unknown, detail: error.detail, gatewayError: error)
        }
        let stream = reports.stream
        return AsyncThrowingStream { continuation in
            let reader = Task {
                do {
                    for try await event in stream {
                        guard let device = reports.device(in: event) else { continue }
                        continuation.yield(CBDiscovery(peripheral: self.peripheral(device.address, device: device), device: device))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                reader.cancel()
                stream.close()
            }
        }
    }

    /// The peripheral of a Bluetooth address (not Core Bluetooth's, which
    /// hides addresses).
    public func peripheral(address: String) -> CBPeripheral {
        peripheral(address.uppercased().replacingOccurrences(of: "-", with: ":"), device: nil)
    }

    /// Connects (the gateway's kept connection) and returns once it is.
    /// (Not `connect(_:)`: in async code that name would shadow Core
    /// Bluetooth's `connect(_:options:)`.)
    public func connect(to peripheral: CBPeripheral) async throws {
        guard let gateway else { throw CBError(.unknown, detail: lastGatewayError?.detail ?? "no gateway") }
        do {
            let kept = try await gateway.decode(
                GatewayJSON.KeptConnection.self, "PUT", peripheral.path + "/keep", query: peripheral.adapterQuery,
                json: KeepRequest(label: restoreIdentifier))
            if kept.status != "connected" {
                // The keeper connects as soon as it can; a connect request
                // waits for that (or makes it) within its own deadline.
                try await gateway.send(
                    "POST", peripheral.path + "/connect",
                    query: peripheral.adapterQuery + [URLQueryItem(name: "timeout_ms", value: "60000")])
            }
        } catch {
            throw CBError.from(error)
        }
        await onQueue { peripheral.state = .connected }
    }

    /// Ends the kept connection and disconnects.
    public func disconnect(_ peripheral: CBPeripheral) async throws {
        guard let gateway else { throw CBError(.unknown, detail: lastGatewayError?.detail ?? "no gateway") }
        do throws(GatewayError) {
            try await gateway.send("DELETE", peripheral.path + "/keep", query: peripheral.adapterQuery)
        } catch where error.status == 404 {
        } catch {
            throw CBError.from(error)
        }
        do throws(GatewayError) {
            try await gateway.send("POST", peripheral.path + "/disconnect", query: peripheral.adapterQuery)
        } catch {
            throw CBError.from(error)
        }
        await onQueue {
            peripheral.connectionEnded()
            peripheral.state = .disconnected
        }
    }
}

extension CBPeripheral {
    /// Every service with its characteristics and descriptors, discovered.
    public func discoverAll() async throws -> [CBService] {
        guard let gateway else { throw CBError(.unknown, detail: "no gateway") }
        let services = try await fetchServices(gateway).get()
        await onQueue {
            self.services = services
            for service in services {
                service.discoveredCharacteristics = service.knownCharacteristics
                for characteristic in service.knownCharacteristics { characteristic.discoveredDescriptors = characteristic.knownDescriptors }
            }
        }
        return services
    }

    /// Reads the value.
    public func value(of characteristic: CBCharacteristic) async throws -> Data {
        guard let gateway else { throw CBError(.unknown, detail: "no gateway") }
        let value = try await Self.read(gateway, valuePath(characteristic) + "/value", adapterQuery).get()
        await onQueue { characteristic.currentValue = value }
        return value
    }

    /// Writes the value; with `.withResponse` it returns once the
    /// peripheral accepted it (a refusal is thrown as `CBATTError`).
    public func write(_ data: Data, to characteristic: CBCharacteristic, type: CBCharacteristicWriteType = .withResponse)
        async throws
    {
        guard let gateway else { throw CBError(.unknown, detail: "no gateway") }
        do {
            try await gateway.send(
                "PUT", valuePath(characteristic) + "/value", query: adapterQuery,
                json: GatewayJSON.Write(value: Hex.encode(data), type: type == .withResponse ? "request" : "command"))
        } catch {
            throw CBError.from(error)
        }
    }

    /// The characteristic's notifications while the sequence is iterated.
    public func notifications(of characteristic: CBCharacteristic) async throws -> AsyncThrowingStream<Data, any Error> {
        guard let gateway else { throw CBError(.unknown, detail: "no gateway") }
        let stream: EventStream
        do {
            stream = try await gateway.events(
                valuePath(characteristic) + "/notifications", query: adapterQuery + [URLQueryItem(name: "encoding", value: "hex")])
        } catch {
            throw CBError.from(error)
        }
        return AsyncThrowingStream { continuation in
            let reader = Task {
                do {
                    for try await event in stream {
                        if event.type == "subscription-ended" { break }
                        guard event.type == "notification", let json = try? event.decode(GatewayJSON.Notification.self),
                            let value = Hex.decode(json.value)
                        else { continue }
                        continuation.yield(value)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                reader.cancel()
                stream.close()
            }
        }
    }
}
