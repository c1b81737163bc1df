import AsyncPrimitives
import Logging

extension Server {
    /// Stops gracefully: stops accepting connections, ends every stream
    /// (clients see the body end), lets running handlers finish for up to
    /// `gracePeriod` (the configuration's by default), then closes every
    /// connection and joins libmicrohttpd's thread. Requests arriving on
    /// open connections meanwhile get 503. Returns once nothing of the
    /// server is left running. Later calls (or a concurrent second call)
    /// return at once.
    public func stop(gracePeriod: Duration? = nil) async {
        let daemon: Daemon? = phase.withLock { phase in
            guard case .running(let daemon) = phase else { return nil }
            phase = .stopping
            return daemon
        }
        guard let daemon else { return }
        let core = daemon.core
        let started = ContinuousClock.now
        core.stopping.store(true, ordering: .releasing)
        daemon.quiesce()
        for exchange in core.liveExchanges { exchange.serverStopping() }
        let deadline = started + (gracePeriod ?? configuration.shutdownGracePeriod)
        while core.liveCount > 0 && ContinuousClock.now < deadline {
            // A detached sleep, so a cancelled caller still gets a graceful
            // stop instead of a busy loop.
            await Task.detached { try? await Task.sleep(for: .milliseconds(10)) }.value
        }
        let abandoned = core.liveCount
        Self.halt(core: core, daemon: daemon)
        phase.withLock { $0 = .stopped }
        core.logger.info("stopped", metadata: [
            "duration_ms": "\((ContinuousClock.now - started).milliseconds)",
            "requests_cut_short": "\(abandoned)",
        ])
    }

    /// Resumes every suspended connection and forbids new suspensions
    /// (MHD_stop_daemon can hang on a suspended connection), then stops
    /// the daemon.
    static func halt(core: ServerCore, daemon: Daemon) {
        core.stopping.store(true, ordering: .releasing)
        for exchange in core.liveExchanges { exchange.control.freeze() }
        daemon.stop()
        core.hangups.stop()
        core.connections.stop()
    }
}
