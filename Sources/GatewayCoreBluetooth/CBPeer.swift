import Foundation

/// A remote device: a peripheral seen by a central manager, or a central
/// using a peripheral manager's services.
///
/// `@unchecked Sendable`: its mutable state changes only on its manager's
/// queue (see `CBPeripheral`).
public class CBPeer: NSObject, @unchecked Sendable {
    /// Stable for a device seen through one gateway: derived from the
    /// gateway's URL and the device's Bluetooth address.
    public let identifier: UUID
    /// The device's Bluetooth address (`C4:7C:8D:6A:3E:01`): not Core
    /// Bluetooth's, which hides addresses; a Linux gateway has them.
    public let address: String

    init(gateway: URL, address: String) {
        identifier = Self.identifier(gateway: gateway, address: address)
        self.address = address
        super.init()
    }

    /// A name-based UUID (version 8, RFC 9562) over the gateway's URL and
    /// the address, so that the same device through the same gateway has
    /// the same identifier in every process, and `retrievePeripherals`
    /// finds it again. Two FNV-1a 64-bit hashes make its 122 bits: it
    /// names, it does not protect anything, so no cryptographic hash.
    static func identifier(gateway: URL, address: String) -> UUID {
        let key = Array("\(gateway.absoluteString.lowercased())|\(address.uppercased())".utf8)
        func fnv1a(_ seed: UInt64) -> UInt64 {
            key.reduce(seed) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
        }
        let high = fnv1a(0xcbf2_9ce4_8422_2325)
        let low = fnv1a(high ^ 0x9e37_79b9_7f4a_7c15)
        var bytes = (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
        bytes[6] = bytes[6] & 0x0f | 0x80
        bytes[8] = bytes[8] & 0x3f | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10],
                bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

/// A central that uses a published service (the simulator's phone, a
/// real phone near the gateway).
public class CBCentral: CBPeer, @unchecked Sendable {
    /// The largest value `updateValue` sends to it in one notification:
    /// bluetoothd does not say the central's MTU, so the smallest, 20 bytes.
    public var maximumUpdateValueLength: Int { 20 }
}

/// Core Bluetooth's L2CAP channel. Connection-oriented channels have no
/// counterpart through the gateway (its API is GATT's): opening one
/// fails with `CBError.unsupported`.
public class CBL2CAPChannel: NSObject, @unchecked Sendable {
    public var psm: CBL2CAPPSM { 0 }
}

public typealias CBL2CAPPSM = UInt16
