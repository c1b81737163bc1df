import Foundation

/// The body of `POST /v1/peripheral/applications` for one service.
struct ApplicationRequest: Encodable, Sendable {
    struct Descriptor: Encodable, Sendable {
        var uuid: String
        var flags: [String]
        var value: String
    }
    struct Characteristic: Encodable, Sendable {
        var uuid: String
        var flags: [String]
        var value: String?
        var delegate: Bool
        var descriptors: [Descriptor]
    }
    struct Service: Encodable, Sendable {
        var uuid: String
        var primary: Bool
        var characteristics: [Characteristic]
    }

    var adapter: String?
    var label: String?
    var services: [Service]

    init(_ service: CBMutableService, adapter: String?, label: String?) {
        self.adapter = adapter
        self.label = label
        let characteristics = (service.characteristics ?? []).compactMap { $0 as? CBMutableCharacteristic }
        for characteristic in characteristics { characteristic.service = service }
        services = [
            Service(
                uuid: service.uuid.gatewayString, primary: service.isPrimary,
                characteristics: characteristics.map { characteristic in
                    Characteristic(
                        uuid: characteristic.uuid.gatewayString, flags: characteristic.bluezFlags,
                        value: characteristic.value.map(Hex.encode), delegate: characteristic.value == nil,
                        descriptors: (characteristic.descriptors ?? []).compactMap { $0 as? CBMutableDescriptor }
                            .filter { $0.uuid.uuidString != CBUUIDClientCharacteristicConfigurationString }
                            .map { Descriptor(uuid: $0.uuid.gatewayString, flags: ["read"], value: Hex.encode($0.bytes)) })
                })
        ]
    }
}
