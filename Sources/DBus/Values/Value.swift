/// A D-Bus value of any type.
///
/// Containers carry their element types so that empty arrays and
/// dictionaries marshal with the right signature. Byte arrays (`ay`) have a
/// case of their own because they are the bulk of Bluetooth traffic and are
/// copied in one block.
public indirect enum Value: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
    case unixFD(UnixFD)
    /// `ay`
    case bytes([UInt8])
    /// `aT` for any element type T other than a dict entry.
    case array(DBusType, [Value])
    /// `a{KV}`, entries in order.
    case dictionary(key: DBusType, value: DBusType, [DictionaryEntry])
    /// `(...)`
    case structure([Value])
    /// `v`
    case variant(Value)

    /// The value's complete type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .bytes: .array(.byte)
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }
}

/// One key-value pair of a D-Bus dictionary.
public struct DictionaryEntry: Sendable, Hashable {
    public var key: Value
    public var value: Value

    public init(_ key: Value, _ value: Value) {
        self.key = key
        self.value = value
    }
}

extension Array where Element == Value {
    /// The signature of a message body holding these values.
    public var signature: Signature { Signature(types: map(\.type)) }
}
