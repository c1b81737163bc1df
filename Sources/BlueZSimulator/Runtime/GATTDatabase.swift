/// A device's attribute table: the scenario's services laid out with ATT
/// handles as a GATT server would, and the object paths bluetoothd derives
/// from them (`serviceXXXX`, `charXXXX`, `descXXXX`, lower-case hex of the
/// declaration handles; src/gatt-client.c).
struct GATTDatabase: Sendable {
    struct Service: Sendable {
        var spec: Scenario.Service
        var handle: UInt16
        var endHandle: UInt16
        var component: String
        var characteristics: Range<Int>
    }

    struct Characteristic: Sendable {
        var spec: Scenario.Characteristic
        var service: Int
        /// The declaration handle (the path's number).
        var handle: UInt16
        var valueHandle: UInt16
        var component: String
        var descriptors: [Descriptor]
        var clientConfiguration: Int?

        var notifies: Bool { spec.flags.contains("notify") || spec.flags.contains("indicate") }
    }

    struct Descriptor: Sendable {
        var spec: Scenario.Descriptor
        var handle: UInt16
        var component: String
        var isClientConfiguration: Bool
    }

    private(set) var services: [Service] = []
    private(set) var characteristics: [Characteristic] = []

    /// Lays out `specs` from `firstHandle` on: a service declaration, then
    /// per characteristic its declaration and value, then its descriptors
    /// (the Client Characteristic Configuration first, for characteristics
    /// that notify or indicate).
    init(_ specs: [Scenario.Service], firstHandle: UInt16 = 0x000a) {
        var handle = firstHandle
        func next() -> UInt16 {
            defer { handle &+= 1 }
            return handle
        }
        for spec in specs {
            let serviceHandle = next()
            let first = characteristics.count
            for characteristicSpec in spec.characteristics {
                let declaration = next()
                let value = next()
                var characteristic = Characteristic(
                    spec: characteristicSpec, service: services.count, handle: declaration, valueHandle: value,
                    component: Self.component("char", declaration), descriptors: [])
                if characteristic.notifies,
                    !characteristicSpec.descriptors.contains(where: { $0.uuid == .clientCharacteristicConfiguration })
                {
                    let descriptorHandle = next()
                    characteristic.clientConfiguration = 0
                    characteristic.descriptors.append(
                        Descriptor(
                            spec: Scenario.Descriptor(
                                uuid: .clientCharacteristicConfiguration, flags: ["read", "write"], value: [0, 0]),
                            handle: descriptorHandle, component: Self.component("desc", descriptorHandle),
                            isClientConfiguration: true))
                }
                for descriptorSpec in characteristicSpec.descriptors {
                    let descriptorHandle = next()
                    let isCCC = descriptorSpec.uuid == .clientCharacteristicConfiguration
                    if isCCC { characteristic.clientConfiguration = characteristic.descriptors.count }
                    characteristic.descriptors.append(
                        Descriptor(
                            spec: descriptorSpec, handle: descriptorHandle,
                            component: Self.component("desc", descriptorHandle), isClientConfiguration: isCCC))
                }
                characteristics.append(characteristic)
            }
            services.append(
                Service(
                    spec: spec, handle: serviceHandle, endHandle: handle &- 1,
                    component: Self.component("service", serviceHandle),
                    characteristics: first..<characteristics.count))
        }
    }

    /// The Generic Attribute service every peripheral has, with Service
    /// Changed (bluetoothd lists it; Generic Access, at handles 1 to 7, it
    /// keeps to itself).
    static let genericAttribute = Scenario.Service(
        uuid: GATTUUID(short: 0x1801),
        characteristics: [Scenario.Characteristic(uuid: GATTUUID(short: 0x2a05), flags: ["indicate"])])

    /// `char000c`: a prefix and four lower-case hex digits.
    static func component(_ prefix: String, _ handle: UInt16) -> String {
        let digits = String(handle, radix: 16)
        return prefix + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
