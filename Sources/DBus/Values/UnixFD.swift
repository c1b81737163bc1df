/// A Unix file descriptor carried in a message (type `h`).
///
/// A descriptor read from a message is a new descriptor owned by the reader,
/// who must close it. A descriptor written into a message is duplicated by
/// libdbus; the writer keeps its own.
public struct UnixFD: Sendable, Hashable {
    public let rawValue: Int32

    public init(_ rawValue: Int32) { self.rawValue = rawValue }
}
