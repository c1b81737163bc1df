// Typed views of a value. Each returns nil when the value is of another type;
// variants are looked through, so `.variant(.string("x")).string == "x"`.

extension Value {
    /// The value inside any number of variant wrappers.
    public var unwrapped: Value {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    public var byte: UInt8? { if case .byte(let v) = unwrapped { v } else { nil } }
    public var bool: Bool? { if case .boolean(let v) = unwrapped { v } else { nil } }
    public var int16: Int16? { if case .int16(let v) = unwrapped { v } else { nil } }
    public var uint16: UInt16? { if case .uint16(let v) = unwrapped { v } else { nil } }
    public var int32: Int32? { if case .int32(let v) = unwrapped { v } else { nil } }
    public var uint32: UInt32? { if case .uint32(let v) = unwrapped { v } else { nil } }
    public var int64: Int64? { if case .int64(let v) = unwrapped { v } else { nil } }
    public var uint64: UInt64? { if case .uint64(let v) = unwrapped { v } else { nil } }
    public var double: Double? { if case .double(let v) = unwrapped { v } else { nil } }
    public var string: String? { if case .string(let v) = unwrapped { v } else { nil } }
    public var objectPath: ObjectPath? { if case .objectPath(let v) = unwrapped { v } else { nil } }
    public var signatureValue: Signature? { if case .signature(let v) = unwrapped { v } else { nil } }
    public var unixFD: UnixFD? { if case .unixFD(let v) = unwrapped { v } else { nil } }

    /// `ay` as bytes (also accepts an array of `.byte` values).
    public var bytes: [UInt8]? {
        switch unwrapped {
        case .bytes(let bytes): return bytes
        case .array(.byte, let values): return values.compactMap(\.byte)
        default: return nil
        }
    }

    /// The elements of any array (bytes become `.byte` values).
    public var array: [Value]? {
        switch unwrapped {
        case .array(_, let values): values
        case .bytes(let bytes): bytes.map(Value.byte)
        default: nil
        }
    }

    /// `as` as strings; nil if any element is not a string.
    public var strings: [String]? {
        guard let values = array else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(values.count)
        for value in values {
            guard let string = value.string else { return nil }
            strings.append(string)
        }
        return strings
    }

    public var dictionaryEntries: [DictionaryEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { entries } else { nil }
    }

    public var fields: [Value]? { if case .structure(let v) = unwrapped { v } else { nil } }

    /// `a{sv}` (or any string-keyed dictionary) with the variant wrappers of
    /// its values removed.
    public var vardict: [String: Value]? {
        guard case .dictionary(.string, _, let entries) = unwrapped else { return nil }
        var result: [String: Value] = [:]
        result.reserveCapacity(entries.count)
        for entry in entries {
            guard case .string(let key) = entry.key else { return nil }
            result[key] = entry.value.unwrapped
        }
        return result
    }
}

extension Value {
    /// `a{sv}` from a Swift dictionary; each value is wrapped in a variant.
    /// Keys are sorted so the encoding is deterministic.
    public static func vardict(_ dictionary: [String: Value]) -> Value {
        .dictionary(
            key: .string, value: .variant,
            dictionary.keys.sorted().map { DictionaryEntry(.string($0), .variant(dictionary[$0].unsafelyUnwrapped)) })
    }

    /// `as` from strings.
    public static func strings(_ strings: [String]) -> Value {
        .array(.string, strings.map(Value.string))
    }

    /// `ao` from object paths.
    public static func objectPaths(_ paths: [ObjectPath]) -> Value {
        .array(.objectPath, paths.map(Value.objectPath))
    }
}
