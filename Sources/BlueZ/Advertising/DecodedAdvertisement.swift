/// What a decoder read from one advertised payload: a beacon's identity or
/// a sensor's measurements, named fields in the order of the frame.
public struct DecodedAdvertisement: Sendable, Hashable {
    /// The frame format: `ibeacon`, `eddystone-uid`, `eddystone-url`,
    /// `eddystone-tlm`, `bthome`, ...
    public var format: String
    /// Where the payload was: manufacturer data of a company, or service
    /// data of a UUID.
    public var source: AdvertisementDecoder.Key
    /// The fields, in frame order; names are unique within one result.
    public var fields: [Field]

    public init(format: String, source: AdvertisementDecoder.Key, fields: [Field]) {
        self.format = format
        self.source = source
        self.fields = fields
    }

    /// One named value of a decoded frame.
    public struct Field: Sendable, Hashable {
        /// A snake_case name (`temperature`, `major`, `battery_mv`).
        public var name: String
        public var value: Value

        public init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// A field's value.
    public enum Value: Sendable, Hashable {
        case integer(Int)
        /// A measurement with a fractional scale (`21.5` °C).
        case number(Double)
        case text(String)
        case flag(Bool)
        case bytes([UInt8])
    }

    /// The value of the field called `name`, if there is one.
    public subscript(name: String) -> Value? {
        fields.first { $0.name == name }?.value
    }
}
