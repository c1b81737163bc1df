import Glibc

/// A Unix file descriptor carried in a message (type `h`).
///
/// A descriptor read from a message is a new descriptor owned by the reader,
/// who must close it. A descriptor written into a message is duplicated by
/// libdbus; the writer keeps its own, unless it hands it over with
/// `transferring(_:)`.
public struct UnixFD: Sendable, Hashable {
    public let rawValue: Int32
    /// Set for a descriptor handed over to the message: closed when the last
    /// copy of this value goes, which for a message being sent is after the
    /// loop thread has marshalled it (libdbus then holds its own duplicate).
    private let owner: Owner?

    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
        owner = nil
    }

    /// A descriptor the message takes over: the caller must not use or
    /// close it afterwards. It is closed once the message has been sent (or
    /// dropped unsent). A method handler that answers with a descriptor it
    /// made for the caller (one end of a socket pair) needs this: the reply
    /// is marshalled later, on the connection's thread, so closing its copy
    /// on return would be too early, and keeping it would keep the socket
    /// open after the caller closed its end.
    public static func transferring(_ rawValue: Int32) -> UnixFD {
        UnixFD(rawValue: rawValue, owner: Owner(rawValue))
    }

    private init(rawValue: Int32, owner: Owner) {
        self.rawValue = rawValue
        self.owner = owner
    }

    public static func == (lhs: UnixFD, rhs: UnixFD) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// Closes its descriptor when the last value holding it goes.
    private final class Owner: Sendable {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { Glibc.close(fd) }
    }
}
