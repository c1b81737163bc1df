import Foundation
import Glibc

/// Where a contender serves what the phases ask of it.
struct Endpoint {
    var port: Int
    /// A read of the responder's `fff1`.
    var readPath: String
    /// A notification stream of the responder's `fff2`.
    var notifyPath: String
    /// The stream the memory phase holds 1,000 of, idle.
    var idlePath: String
}

extension Bench {
    // MARK: The peer

    var peerDirectory: String { options.root + "/Benchmarks/peer" }
    var peerPython: String { peerDirectory + "/.venv/bin/python" }

    static let peerReadPath = "/read?device=\(device)&char=fff1"
    static let peerNotifyPath = "/notify?device=\(device)&char=fff2"

    /// Starts the peer on `address` (Bleak reads the system bus's address
    /// from DBUS_SYSTEM_BUS_ADDRESS) and waits for its first 200 on /health.
    func startPeer(_ address: String, port: Int, tag: String) throws -> Child {
        guard access(peerPython, X_OK) == 0 else {
            throw BenchError("no \(peerPython): `make bench-build` makes the peer's virtual environment")
        }
        let child = try Child(
            "peer", [peerPython, peerDirectory + "/peer.py", "--listen", "127.0.0.1:\(port)", "--log-level", "warning"],
            cpu: gatewayCPU, log: logs + "/peer-\(tag).log",
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address, "PYTHONDONTWRITEBYTECODE": "1"])
        try waitForHealth(child, port: port, log: "peer-\(tag).log")
        return child
    }

    /// Polls /health every 0.5 ms until it answers 200 (or the process
    /// exits, or 20 s pass). The start-up phase times the first 200 with
    /// this: a coarser step adds up to a step to every start (5 ms did,
    /// against a 15 ms target).
    func waitForHealth(_ child: Child, port: Int, log: String, timeout: Double = 20) throws {
        let deadline = Clock.seconds() + timeout
        while Clock.seconds() < deadline {
            if let response = HTTPProbe.get(port: port, path: "/health", timeout: 1), response.status == 200 { return }
            guard child.isRunning else { throw BenchError("\(child.name) exited; see \(logs)/\(log)") }
            Clock.sleep(0.0005)
        }
        throw BenchError("\(child.name) did not answer /health")
    }

    // MARK: Who is on the bus

    /// Leaves `subject` alone on the bus with the responder: stops the other
    /// contender, starts this one if it is not running (`.raw` stops both;
    /// the raw tools start with their phase).
    func use(_ subject: Subject) throws {
        if subject != .gateway, let running = gateway {
            running.stop()
            gateway = nil
        }
        if subject != .peer, let running = peer {
            running.stop()
            peer = nil
        }
        switch subject {
        case .raw: return
        case .gateway:
            guard gateway == nil else { return }
            port = HTTPProbe.freePort()
            gateway = try startGateway(address, port: port, tag: "main")
        case .peer:
            guard peer == nil else { return }
            peerPort = HTTPProbe.freePort()
            peer = try startPeer(address, port: peerPort, tag: "main")
        }
        // Whatever a fresh process still does after its first 200 on
        // /health happens before the measurement, not in it.
        Clock.sleep(0.5)
    }

    /// The contenders (gateway, peer) that run `phase` in this run.
    func contenders(for phase: String) -> [Subject] {
        let both: [Subject] = [.gateway, .peer]
        return both.filter { options.wants(phase, $0) }
    }

    /// Stops everything still running (after a phase failed, too), so that
    /// no gateway, peer, responder or bus daemon outlives the run.
    func stopAll() {
        for child in [peer, gateway, responder, daemon] { child?.stop() }
        (peer, gateway, responder, daemon) = (nil, nil, nil, nil)
    }

    func endpoint(_ subject: Subject) -> Endpoint {
        switch subject {
        case .peer:
            Endpoint(port: peerPort, readPath: Self.peerReadPath, notifyPath: Self.peerNotifyPath, idlePath: Self.peerNotifyPath)
        case .gateway, .raw:
            Endpoint(port: port, readPath: Self.readPath, notifyPath: Self.notifyPath, idlePath: "/v1/events")
        }
    }

    /// The running process of a contender.
    func process(_ subject: Subject) -> Child? {
        switch subject {
        case .gateway: gateway
        case .peer: peer
        case .raw: nil
        }
    }

    /// Records a figure the targets are judged by.
    func figure(_ subject: Subject, _ name: String, _ value: Double?) {
        guard let value, value.isFinite else { return }
        figures["\(subject.rawValue).\(name)"] = value
    }
}
