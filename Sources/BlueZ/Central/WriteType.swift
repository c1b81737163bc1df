/// How a characteristic write is sent (the `type` option of BlueZ's
/// `WriteValue`).
public enum WriteType: String, Sendable, Hashable, CaseIterable {
    /// Write Request: the peripheral acknowledges (or answers an ATT error).
    case request
    /// Write Command: no acknowledgement; the value must fit one packet
    /// (ATT MTU - 3 bytes).
    case command
    /// Reliable write: prepared and executed (Prepare/Execute Write).
    case reliable
}

/// Names one characteristic (or descriptor) of a device: by UUID, with the
/// service's UUID to tell apart several with the same UUID, or by handle.
public enum AttributeSelector: Sendable, Hashable, CustomStringConvertible {
    case uuid(BluetoothUUID, service: BluetoothUUID? = nil)
    case handle(UInt16)

    public var description: String {
        switch self {
        case .uuid(let uuid, let service?): "\(uuid.shortString) in service \(service.shortString)"
        case .uuid(let uuid, nil): uuid.shortString
        case .handle(let handle): "handle 0x" + String(handle, radix: 16)
        }
    }
}
