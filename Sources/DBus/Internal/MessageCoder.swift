import CDBus

/// Converts between `Message` values and libdbus messages. Used only on a
/// connection's loop thread.
enum MessageCoder {
    // MARK: Encoding

    /// A new libdbus message (owned by the caller: unref it) for `message`.
    /// Throws `InvalidArgs` for a body libdbus would reject (it aborts the
    /// process on such input instead of failing).
    static func encode(_ message: Message) throws(DBusError) -> OpaquePointer {
        for value in message.body { try value.validate() }
        // Re-parse the body's signature: this checks the limits on nesting
        // and length that are only visible in the signature text.
        _ = try Signature(message.body.signature.rawValue)

        guard let cMessage = try newMessage(message) else {
            throw DBusError(.noMemory, "out of memory creating a message")
        }
        do {
            var iterator = DBusMessageIter()
            dbus_message_iter_init_append(cMessage, &iterator)
            for value in message.body { try append(value, to: &iterator) }
        } catch {
            dbus_message_unref(cMessage)
            throw error
        }
        return cMessage
    }

    private static func newMessage(_ message: Message) throws(DBusError) -> OpaquePointer? {
        let cMessage: OpaquePointer?
        switch message.kind {
        case .methodCall:
            guard let path = message.path, let member = message.member else {
                throw DBusError(.invalidArgs, "a method call needs a path and a member")
            }
            cMessage = dbus_message_new_method_call(
                message.destination?.rawValue, path.rawValue, message.interface?.rawValue, member.rawValue)
            if let cMessage, message.noReplyExpected { dbus_message_set_no_reply(cMessage, 1) }
        case .signal:
            guard let path = message.path, let interface = message.interface, let member = message.member else {
                throw DBusError(.invalidArgs, "a signal needs a path, an interface and a member")
            }
            cMessage = dbus_message_new_signal(path.rawValue, interface.rawValue, member.rawValue)
            if let cMessage, let destination = message.destination {
                dbus_message_set_destination(cMessage, destination.rawValue)
            }
        case .methodReturn, .error:
            guard let replySerial = message.replySerial else {
                throw DBusError(.invalidArgs, "a reply needs the serial of the call it answers")
            }
            if message.kind == .error {
                cMessage = dbus_message_new(CDBUS_MESSAGE_TYPE_ERROR)
                if let cMessage { dbus_message_set_error_name(cMessage, (message.errorName ?? .failed).rawValue) }
            } else {
                cMessage = dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN)
            }
            if let cMessage {
                dbus_message_set_reply_serial(cMessage, replySerial)
                dbus_message_set_no_reply(cMessage, 1)
                if let destination = message.destination {
                    dbus_message_set_destination(cMessage, destination.rawValue)
                }
            }
        }
        return cMessage
    }

    private static func check(_ ok: dbus_bool_t) throws(DBusError) {
        if ok == 0 { throw DBusError(.noMemory, "out of memory marshalling a message") }
    }

    private static func appendBasic<T: BitwiseCopyable>(_ iterator: inout DBusMessageIter, _ type: Int32, _ value: T) throws(DBusError) {
        var copy = value
        try check(dbus_message_iter_append_basic(&iterator, type, &copy))
    }

    private static func append(_ value: Value, to iterator: inout DBusMessageIter) throws(DBusError) {
        switch value {
        case .byte(let v): try appendBasic(&iterator, CDBUS_TYPE_BYTE, v)
        case .boolean(let v): try appendBasic(&iterator, CDBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): try appendBasic(&iterator, CDBUS_TYPE_INT16, v)
        case .uint16(let v): try appendBasic(&iterator, CDBUS_TYPE_UINT16, v)
        case .int32(let v): try appendBasic(&iterator, CDBUS_TYPE_INT32, v)
        case .uint32(let v): try appendBasic(&iterator, CDBUS_TYPE_UINT32, v)
        case .int64(let v): try appendBasic(&iterator, CDBUS_TYPE_INT64, v)
        case .uint64(let v): try appendBasic(&iterator, CDBUS_TYPE_UINT64, v)
        case .double(let v): try appendBasic(&iterator, CDBUS_TYPE_DOUBLE, v)
        case .unixFD(let fd): try appendBasic(&iterator, CDBUS_TYPE_UNIX_FD, fd.rawValue)
        case .string(let v): try appendString(&iterator, CDBUS_TYPE_STRING, v)
        case .objectPath(let v): try appendString(&iterator, CDBUS_TYPE_OBJECT_PATH, v.rawValue)
        case .signature(let v): try appendString(&iterator, CDBUS_TYPE_SIGNATURE, v.rawValue)
        case .bytes(let bytes):
            try withContainer(&iterator, CDBUS_TYPE_ARRAY, "y") { (sub: inout DBusMessageIter) throws(DBusError) in
                guard !bytes.isEmpty else { return }
                let ok = bytes.withUnsafeBufferPointer { buffer -> dbus_bool_t in
                    var base = buffer.baseAddress
                    return dbus_message_iter_append_fixed_array(&sub, CDBUS_TYPE_BYTE, &base, Int32(buffer.count))
                }
                try check(ok)
            }
        case .array(let elementType, let elements):
            try withContainer(&iterator, CDBUS_TYPE_ARRAY, elementType.signature) {
                (sub: inout DBusMessageIter) throws(DBusError) in
                for element in elements { try append(element, to: &sub) }
            }
        case .dictionary(let keyType, let valueType, let entries):
            let entrySignature = "{\(keyType.signature)\(valueType.signature)}"
            try withContainer(&iterator, CDBUS_TYPE_ARRAY, entrySignature) {
                (sub: inout DBusMessageIter) throws(DBusError) in
                for entry in entries {
                    try withContainer(&sub, CDBUS_TYPE_DICT_ENTRY, nil) {
                        (entryIterator: inout DBusMessageIter) throws(DBusError) in
                        try append(entry.key, to: &entryIterator)
                        try append(entry.value, to: &entryIterator)
                    }
                }
            }
        case .structure(let fields):
            try withContainer(&iterator, CDBUS_TYPE_STRUCT, nil) { (sub: inout DBusMessageIter) throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        case .variant(let inner):
            try withContainer(&iterator, CDBUS_TYPE_VARIANT, inner.type.signature) {
                (sub: inout DBusMessageIter) throws(DBusError) in
                try append(inner, to: &sub)
            }
        }
    }

    private static func appendString(_ iterator: inout DBusMessageIter, _ type: Int32, _ string: String) throws(DBusError) {
        let ok = string.withCString { pointer -> dbus_bool_t in
            var cString: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator, type, &cString)
        }
        try check(ok)
    }

    private static func withContainer(
        _ iterator: inout DBusMessageIter, _ type: Int32, _ contentSignature: String?,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let contentSignature {
            opened = contentSignature.withCString { dbus_message_iter_open_container(&iterator, type, $0, &sub) }
        } else {
            opened = dbus_message_iter_open_container(&iterator, type, nil, &sub)
        }
        try check(opened)
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iterator, &sub)
            throw error
        }
        try check(dbus_message_iter_close_container(&iterator, &sub))
    }

    // MARK: Decoding

    /// The `Message` for a libdbus message (which libdbus has validated).
    static func decode(_ cMessage: OpaquePointer) -> Message {
        let kind: Message.Kind
        switch dbus_message_get_type(cMessage) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: kind = .error
        default: kind = .signal
        }
        var message = Message(kind: kind)
        message.serial = dbus_message_get_serial(cMessage)
        let replySerial = dbus_message_get_reply_serial(cMessage)
        message.replySerial = replySerial == 0 ? nil : replySerial
        message.sender = dbus_message_get_sender(cMessage).map { BusName(unchecked: String(cString: $0)) }
        message.destination = dbus_message_get_destination(cMessage).map { BusName(unchecked: String(cString: $0)) }
        message.path = dbus_message_get_path(cMessage).map { ObjectPath(unchecked: String(cString: $0)) }
        message.interface = dbus_message_get_interface(cMessage).map { InterfaceName(unchecked: String(cString: $0)) }
        message.member = dbus_message_get_member(cMessage).map { MemberName(unchecked: String(cString: $0)) }
        message.errorName = dbus_message_get_error_name(cMessage).map { ErrorName(unchecked: String(cString: $0)) }
        message.noReplyExpected = dbus_message_get_no_reply(cMessage) != 0

        var iterator = DBusMessageIter()
        if dbus_message_iter_init(cMessage, &iterator) != 0 {
            message.body = decodeAll(&iterator)
        }
        return message
    }

    private static func decodeAll(_ iterator: inout DBusMessageIter) -> [Value] {
        var values: [Value] = []
        while dbus_message_iter_get_arg_type(&iterator) != CDBUS_TYPE_INVALID {
            if let value = decodeOne(&iterator) { values.append(value) }
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        dbus_message_iter_get_basic(&iterator, &value)
        return value
    }

    private static func basicString(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// The type described by the iterator's current signature.
    private static func currentType(_ iterator: inout DBusMessageIter) -> DBusType? {
        guard let cSignature = dbus_message_iter_get_signature(&iterator) else { return nil }
        defer { dbus_free(cSignature) }
        return (try? Signature(String(cString: cSignature)))?.singleType
    }

    private static func decodeOne(_ iterator: inout DBusMessageIter) -> Value? {
        switch dbus_message_iter_get_arg_type(&iterator) {
        case CDBUS_TYPE_BYTE: return .byte(basic(&iterator, UInt8(0)))
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(&iterator, dbus_bool_t(0)) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(&iterator, Int16(0)))
        case CDBUS_TYPE_UINT16: return .uint16(basic(&iterator, UInt16(0)))
        case CDBUS_TYPE_INT32: return .int32(basic(&iterator, Int32(0)))
        case CDBUS_TYPE_UINT32: return .uint32(basic(&iterator, UInt32(0)))
        case CDBUS_TYPE_INT64: return .int64(basic(&iterator, Int64(0)))
        case CDBUS_TYPE_UINT64: return .uint64(basic(&iterator, UInt64(0)))
        case CDBUS_TYPE_DOUBLE: return .double(basic(&iterator, Double(0)))
        case CDBUS_TYPE_UNIX_FD: return .unixFD(UnixFD(basic(&iterator, Int32(-1))))
        case CDBUS_TYPE_STRING: return .string(basicString(&iterator))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(ObjectPath(unchecked: basicString(&iterator)))
        case CDBUS_TYPE_SIGNATURE: return (try? Signature(basicString(&iterator))).map(Value.signature)
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return decodeOne(&sub).map(Value.variant)
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .structure(decodeAll(&sub))
        case CDBUS_TYPE_ARRAY:
            return decodeArray(&iterator)
        default:
            return nil
        }
    }

    private static func decodeArray(_ iterator: inout DBusMessageIter) -> Value? {
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &sub)
        switch dbus_message_iter_get_element_type(&iterator) {
        case CDBUS_TYPE_BYTE:
            var pointer: UnsafeRawPointer?
            var count: Int32 = 0
            dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
            guard let pointer, count > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
        case CDBUS_TYPE_DICT_ENTRY:
            guard case .dictionary(let keyType, let valueType)? = currentType(&iterator) else { return nil }
            var entries: [DictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                var entryIterator = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entryIterator)
                let key = decodeOne(&entryIterator)
                dbus_message_iter_next(&entryIterator)
                let value = decodeOne(&entryIterator)
                if let key, let value { entries.append(DictionaryEntry(key, value)) }
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: keyType, value: valueType, entries)
        default:
            guard case .array(let elementType)? = currentType(&iterator) else { return nil }
            var elements: [Value] = []
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                if let element = decodeOne(&sub) { elements.append(element) }
                dbus_message_iter_next(&sub)
            }
            return .array(elementType, elements)
        }
    }
}
