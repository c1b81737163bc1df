import ServiceLifecycle

/// A service of the gateway's group, described by its name in the group's
/// log lines: the default description spells out every stored property
/// (the configurations, the hand-overs and their queues), several
/// kilobytes in each debug line of start-up and shutdown.
protocol GatewayService: Service, CustomStringConvertible {}

extension GatewayService {
    /// The type's name, without `String(describing:)`, whose dynamic casts
    /// each scan every protocol conformance of the binary the first time.
    var description: String { _typeName(Self.self, qualified: false) }
}
