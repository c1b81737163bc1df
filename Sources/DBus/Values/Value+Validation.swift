extension Value {
    /// The deepest container nesting the specification allows in a message.
    static let maximumDepth = 64

    /// Checks that the value is well-formed for marshalling: every element of
    /// an array or dictionary has the declared type, strings contain no NUL,
    /// dictionary keys are basic types and nesting stays within the limit.
    /// libdbus aborts the process on such mistakes instead of failing, so they
    /// are caught here as `InvalidArgs`.
    public func validate() throws(DBusError) {
        try validate(depth: 0)
    }

    private func validate(depth: Int) throws(DBusError) {
        guard depth <= Value.maximumDepth else {
            throw DBusError(.invalidArgs, "value nested deeper than \(Value.maximumDepth) containers")
        }
        switch self {
        case .string(let string):
            if string.utf8.contains(0) { throw DBusError(.invalidArgs, "string contains a NUL character") }
        case .array(let elementType, let elements):
            for element in elements {
                guard element.type == elementType else {
                    throw DBusError(
                        .invalidArgs, "array of \(elementType) holds a value of type \(element.type)")
                }
                try element.validate(depth: depth + 1)
            }
        case .dictionary(let keyType, let valueType, let entries):
            guard keyType.isBasic else { throw DBusError(.invalidArgs, "dictionary key type \(keyType) is not basic") }
            for entry in entries {
                guard entry.key.type == keyType, entry.value.type == valueType else {
                    throw DBusError(
                        .invalidArgs,
                        "dictionary a{\(keyType)\(valueType)} holds an entry of types \(entry.key.type), \(entry.value.type)")
                }
                try entry.key.validate(depth: depth + 1)
                try entry.value.validate(depth: depth + 1)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError(.invalidArgs, "empty structure") }
            for field in fields { try field.validate(depth: depth + 1) }
        case .variant(let inner):
            try inner.validate(depth: depth + 1)
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double,
            .objectPath, .signature, .unixFD, .bytes:
            break
        }
    }
}
