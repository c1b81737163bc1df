/// An MQTT 5 user property: a name and a value, both UTF-8. A message may
/// carry several with the same name; their order is kept.
public struct UserProperty: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
