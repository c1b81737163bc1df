/// The decoded query of a request target: ordered `name=value` pairs, with
/// repeated names kept.
///
/// `+` decodes to a space and `%XX` to its byte, as HTML forms and most
/// clients encode queries. An item without `=` has an empty value.
public struct QueryItems: Sendable, Hashable, Sequence {
    /// One query item.
    public struct Item: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The items in order.
    public private(set) var items: [Item]

    public init(_ items: [Item] = []) { self.items = items }

    /// Parses a raw (still encoded) query string, without the leading `?`.
    public init(parsing query: Substring) {
        items = query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return Item(
                    name: PercentDecoding.decode(pair[..<equals], plusAsSpace: true),
                    value: PercentDecoding.decode(pair[pair.index(after: equals)...], plusAsSpace: true))
            }
            return Item(name: PercentDecoding.decode(pair, plusAsSpace: true), value: "")
        }
    }

    /// The first value for `name`, or nil.
    public subscript(name: String) -> String? {
        items.first { $0.name == name }?.value
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        items.filter { $0.name == name }.map(\.value)
    }

    public var isEmpty: Bool { items.isEmpty }
    public var count: Int { items.count }

    public func makeIterator() -> IndexingIterator<[Item]> { items.makeIterator() }
}
