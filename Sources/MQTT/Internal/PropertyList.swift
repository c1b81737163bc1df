import CMosquitto
import Glibc

/// Conversions between `MessageProperties` and libmosquitto's property
/// lists (`mosquitto_property *`, an opaque linked list it allocates).
enum PropertyList {
    /// Builds a libmosquitto property list for `properties` (nil when empty),
    /// calls `body` with it and frees it.
    static func with<Result>(
        _ properties: MessageProperties, _ body: (OpaquePointer?) throws -> Result
    ) throws -> Result {
        var list: OpaquePointer? = nil
        defer { cmosq_property_free_all(&list) }
        func check(_ result: Int32, _ what: String) throws {
            guard result == CMOSQ_ERR_SUCCESS else { throw MQTTError.library(result, "property \(what)") }
        }
        if let topic = properties.responseTopic {
            try check(cmosq_property_add_string(&list, CMOSQ_PROP_RESPONSE_TOPIC, topic), "response topic")
        }
        if let data = properties.correlationData {
            guard data.count <= Int(UInt16.max) else {
                throw MQTTError(.invalidArgument, "correlation data longer than 65535 bytes")
            }
            try data.withUnsafeBytes { bytes in
                try check(
                    cmosq_property_add_binary(
                        &list, CMOSQ_PROP_CORRELATION_DATA, bytes.baseAddress, UInt16(bytes.count)),
                    "correlation data")
            }
        }
        if let contentType = properties.contentType {
            try check(cmosq_property_add_string(&list, CMOSQ_PROP_CONTENT_TYPE, contentType), "content type")
        }
        if let expiry = properties.messageExpiryInterval {
            try check(
                cmosq_property_add_int32(&list, CMOSQ_PROP_MESSAGE_EXPIRY_INTERVAL, expiry), "message expiry")
        }
        for property in properties.userProperties {
            try check(
                cmosq_property_add_string_pair(&list, CMOSQ_PROP_USER_PROPERTY, property.name, property.value),
                "user property")
        }
        return try body(list)
    }

    /// The subscription identifiers of a received message (none when the
    /// broker sends none: MQTT 3.1.1, or subscriptions made without).
    static func subscriptionIdentifiers(_ list: OpaquePointer?) -> [UInt32] {
        var identifiers: [UInt32] = []
        var cursor = list
        var skipFirst = false
        while let current = cursor {
            var value: UInt32 = 0
            guard let found = cmosq_property_read_varint(current, CMOSQ_PROP_SUBSCRIPTION_IDENTIFIER, &value, skipFirst)
            else { break }
            identifiers.append(value)
            cursor = found
            skipFirst = true
        }
        return identifiers
    }

    /// Whether a CONNACK's properties let the client use subscription
    /// identifiers (yes unless the broker says it has none).
    static func subscriptionIdentifiersAvailable(_ list: OpaquePointer?) -> Bool {
        guard let list else { return true }
        var available: UInt8 = 1
        _ = cmosq_property_read_byte(list, CMOSQ_PROP_SUBSCRIPTION_ID_AVAILABLE, &available, false)
        return available != 0
    }

    /// Reads the properties this module knows from a received list.
    static func read(_ list: OpaquePointer?) -> MessageProperties {
        var result = MessageProperties()
        guard let list else { return result }
        result.responseTopic = readString(list, CMOSQ_PROP_RESPONSE_TOPIC)
        result.contentType = readString(list, CMOSQ_PROP_CONTENT_TYPE)
        var raw: UnsafeMutableRawPointer? = nil
        var length: UInt16 = 0
        if cmosq_property_read_binary(list, CMOSQ_PROP_CORRELATION_DATA, &raw, &length, false) != nil {
            result.correlationData =
                raw.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            free(raw)
        }
        var expiry: UInt32 = 0
        if cmosq_property_read_int32(list, CMOSQ_PROP_MESSAGE_EXPIRY_INTERVAL, &expiry, false) != nil {
            result.messageExpiryInterval = expiry
        }
        var cursor: OpaquePointer? = list
        var skipFirst = false
        while true {
            var name: UnsafeMutablePointer<CChar>? = nil
            var value: UnsafeMutablePointer<CChar>? = nil
            guard let found = cmosq_property_read_string_pair(cursor, CMOSQ_PROP_USER_PROPERTY, &name, &value, skipFirst)
            else { break }
            if let name, let value {
                result.userProperties.append(UserProperty(String(cString: name), String(cString: value)))
            }
            free(name)
            free(value)
            cursor = found
            skipFirst = true
        }
        return result
    }

    private static func readString(_ list: OpaquePointer, _ identifier: Int32) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard cmosq_property_read_string(list, identifier, &value, false) != nil, let value else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}
