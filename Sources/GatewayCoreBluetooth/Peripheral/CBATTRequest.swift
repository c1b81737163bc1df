import Foundation

/// A central's read or write of a published characteristic, answered with
/// `CBPeripheralManager.respond(to:withResult:)`.
///
/// `@unchecked Sendable`: the delegate fills `value` on the manager's queue
/// before it responds; nothing else changes it.
public class CBATTRequest: NSObject, @unchecked Sendable {
    public let central: CBCentral
    public let characteristic: CBCharacteristic
    public let offset: Int
    /// A write's value; for a read, the delegate sets the value to answer.
    public var value: Data?
    /// The gateway's id of the request (`POST /v1/peripheral/requests/{id}`).
    let id: String
    let isRead: Bool

    init(id: String, isRead: Bool, central: CBCentral, characteristic: CBCharacteristic, offset: Int, value: Data?) {
        self.id = id
        self.isRead = isRead
        self.central = central
        self.characteristic = characteristic
        self.offset = offset
        self.value = value
        super.init()
    }
}
