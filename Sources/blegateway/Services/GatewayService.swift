import ServiceLifecycle

/// A service of the gateway's group, described by its name in the group's
/// log lines: the default description spells out every stored property
/// (the configurations, the hand-overs and their queues), several
/// kilobytes in each debug line of start-up and shutdown.
protocol GatewayService: Service, CustomStringConvertible {}

extension GatewayService {
    var description: String { String(describing: Self.self) }
}
