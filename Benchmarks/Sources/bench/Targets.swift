import Foundation

/// One line of the targets table: what the gateway must reach, what it
/// measured, what it is compared with, and whether it is met.
///
/// The gateway's own targets are judged at the end of the run from
/// `Bench.figures` (`Bench.judgeTargets`); a phase with a target of its own
/// appends a row to `Bench.targets` itself, and the report lists those
/// after these.
struct TargetRow {
    var target: String
    /// The gateway's figure, as the report shows it.
    var measured: String
    /// The peer's and/or the raw floor's figure, and the ratio.
    var comparison: String
    /// nil when a figure it needs was not measured in this run.
    var met: Bool?
    /// false for a row shown for comparison only, with no target.
    var judged = true

    var status: String {
        guard judged else { return "—" }
        return switch met {
        case true?: "MET"
        case false?: "NOT MET"
        case nil: "not measured"
        }
    }

    var json: [String: Any] {
        var object: [String: Any] = ["target": target, "measured": measured, "comparison": comparison, "status": status]
        if let met { object["met"] = met }
        return object
    }

    static func table(_ rows: [TargetRow]) -> String {
        guard !rows.isEmpty else { return "No target was judged in this run.\n" }
        var out = "| target | blegateway | compared with | status |\n|---|---|---|---|\n"
        for row in rows {
            out += "| \(row.target) | \(row.measured) | \(row.comparison) | **\(row.status)** |\n"
        }
        return out
    }
}

extension Bench {
    /// The gateway's performance targets, judged from this run's figures,
    /// followed by any rows the phases added.
    func judgeTargets() -> [TargetRow] {
        let f = figures
        func value(_ key: String) -> Double? { f[key] }
        func n(_ value: Double?, _ unit: String = "") -> String { Format.number(value, unit: unit) }
        func times(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b, b != 0 else { return "" }
            return " (\(Format.ratio(a / b)))"
        }
        func all(_ conditions: Bool?...) -> Bool? {
            conditions.contains { $0 == nil } ? nil : !conditions.contains { $0 == false }
        }
        var rows: [TargetRow] = []

        // Reads (issue 29's targets, each a ratio within this run).
        let cpu1 = value("gateway.read1.cpu_per_read_us"), peerCPU1 = value("peer.read1.cpu_per_read_us")
        rows.append(TargetRow(
            target: "CPU per read, 1 client: ≤ 0.6× the peer's",
            measured: n(cpu1, "µs"),
            comparison: "peer \(n(peerCPU1, "µs"))\(times(cpu1, peerCPU1)); raw client \(n(value("raw.read1.cpu_per_read_us"), "µs"))",
            met: cpu1.flatMap { g in peerCPU1.map { g <= 0.6 * $0 } }))
        let p50 = value("gateway.read1.p50_us"), rawP50 = value("raw.read1.p50_us"), peerP50 = value("peer.read1.p50_us")
        rows.append(TargetRow(
            target: "read p50, 1 client: ≤ 1.5× raw, and below the peer",
            measured: n(p50, "µs"),
            comparison: "raw \(n(rawP50, "µs"))\(times(p50, rawP50)); peer \(n(peerP50, "µs"))\(times(p50, peerP50))",
            met: all(p50.flatMap { g in rawP50.map { g <= 1.5 * $0 } }, p50.flatMap { g in peerP50.map { g < $0 } })))
        let rps = value("gateway.read16.rps"), peerRPS = value("peer.read16.rps"), rawRPS = value("raw.read16.rps")
        rows.append(TargetRow(
            target: "reads/s, 16 clients on one characteristic: ≥ 2× the peer, ≥ 0.9× raw",
            measured: n(rps, "req/s"),
            comparison: "peer \(n(peerRPS))\(times(rps, peerRPS)); raw \(n(rawRPS))\(times(rps, rawRPS))",
            met: all(rps.flatMap { g in peerRPS.map { g >= 2 * $0 } }, rps.flatMap { g in rawRPS.map { g >= 0.9 * $0 } })))

        // Notifications, with the state store on (the gateway's default:
        // every value stored, each batch synced).
        let perNotification = value("gateway.notify1k.cpu_per_notification_us")
        let peerPerNotification = value("peer.notify1k.cpu_per_notification_us")
        let common = value("notify.common_rate")
        let commonGateway = value("gateway.notify.common.cpu_per_notification_us")
        let commonPeer = value("peer.notify.common.cpu_per_notification_us")
        var measured = "\(n(perNotification, "µs")) at 1 kHz"
        var comparison = "peer \(n(peerPerNotification, "µs"))\(times(perNotification, peerPerNotification))"
        var atCommon: Bool? = nil
        if let common {
            measured += "; \(n(commonGateway, "µs")) at \(n(common))/s"
            comparison += "; at \(n(common))/s peer \(n(commonPeer, "µs"))\(times(commonGateway, commonPeer))"
            atCommon = commonGateway.flatMap { g in commonPeer.map { g <= 0.7 * $0 } }
        }
        rows.append(TargetRow(
            target: "CPU per notification, store on, at 1 kHz and at the highest rate both keep without loss: ≤ 0.7× the peer's",
            measured: measured, comparison: comparison,
            met: all(perNotification.flatMap { g in peerPerNotification.map { g <= 0.7 * $0 } }, atCommon)))
        // The same at 1 kHz for each durability the store offers, measured
        // side by side in the `state` phase (for comparison, no target).
        let byDurability = ["full", "normal", "off"].map { value("gateway.notify1k.\($0).cpu_per_notification_us") }
        if byDurability.contains(where: { $0 != nil }) {
            rows.append(TargetRow(
                target: "CPU per notification at 1 kHz by store durability: full (default) / normal / --no-state (state phase; for comparison)",
                measured: byDurability.map { n($0, "µs") }.joined(separator: " / "),
                comparison: "peer \(n(peerPerNotification, "µs")); ÷ peer " + byDurability.map { Format.ratio($0.flatMap { g in peerPerNotification.map { g / $0 } }) }.joined(separator: " / "),
                met: nil, judged: false))
        }
        let best = value("gateway.notify.best_rate"), rawBest = value("raw.notify.best_rate")
        rows.append(TargetRow(
            target: "one subscriber's zero-loss rate: ≥ 0.95× raw",
            measured: n(best, "/s"),
            comparison: "raw \(n(rawBest, "/s"))\(times(best, rawBest)); peer \(n(value("peer.notify.best_rate"), "/s"))",
            met: best.flatMap { g in rawBest.map { g >= 0.95 * $0 } }))

        // Memory, start-up and the image.
        let idle = value("gateway.idle_rss_mib")
        rows.append(TargetRow(
            target: "idle RSS ≤ 16 MiB", measured: n(idle, "MiB"),
            comparison: "peer \(n(value("peer.idle_rss_mib"), "MiB")); raw receiver \(n(value("raw.idle_rss_mib"), "MiB"))",
            met: idle.map { $0 <= 16 }))
        let stream = value("gateway.stream_kib")
        rows.append(TargetRow(
            target: "memory per idle SSE stream ≤ 8 KiB (request heads up to 4 KiB served, larger ones our 431 problem)",
            measured: n(stream, "KiB"),
            comparison: "peer \(n(value("peer.stream_kib"), "KiB"))\(times(stream, value("peer.stream_kib")))",
            met: stream.map { $0 <= 8 }))
        let settle = Int(options.settleSeconds)
        let returned = value("gateway.rss_after_close_ratio")
        rows.append(TargetRow(
            target: "RSS a minute after 1,000 streams close ≤ 1.1× idle",
            measured: "\(n(value("gateway.rss_after_close_mib"), "MiB")), \(Format.ratio(returned)) idle after \(settle) s",
            comparison: "peer \(n(value("peer.rss_after_close_mib"), "MiB")), \(Format.ratio(value("peer.rss_after_close_ratio"))) its idle",
            met: settle >= 60 ? returned.map { $0 <= 1.1 } : nil))
        let startup = value("gateway.startup_ms")
        rows.append(TargetRow(
            target: "start-up to first 200 on /health ≤ 15 ms (a restart, with the state of an earlier start)", measured: n(startup, "ms"),
            comparison: "the first start (creating the state store) \(n(value("gateway.first_startup_ms"), "ms")); peer \(n(value("peer.startup_ms"), "ms"))\(times(startup, value("peer.startup_ms"))); raw connect + GetManagedObjects \(n(value("raw.startup_ms"), "ms"))",
            met: startup.map { $0 <= 15 }))
        let image = value("gateway.image_mb")
        rows.append(TargetRow(
            target: "container image (docker/Dockerfile, podman) ≤ 40 MB", measured: n(image, "MB"),
            comparison: "—", met: image.map { $0 <= 40 }))

        // Fan-out.
        let key = "fanout1000@1000"
        let undelivered = value("gateway.\(key).lost"), dropped = value("gateway.\(key).dropped")
        let fanoutCPU = value("gateway.\(key).cpu")
        let peerUndelivered = value("peer.\(key).lost"), peerCPU = value("peer.\(key).cpu")
        rows.append(TargetRow(
            target: "1,000 subscribers at 1 kHz: zero loss, within one core (the gateway runs pinned to one)",
            measured: undelivered == nil ? "—" : "\(n(undelivered)) not delivered, \(n(dropped)) streams dropped, \(n(fanoutCPU, "%")) of a core",
            comparison: peerUndelivered == nil ? "peer —" : "peer \(n(peerUndelivered)) not delivered, \(n(peerCPU, "%")) of a core",
            met: all(undelivered.map { $0 == 0 }, dropped.map { $0 == 0 }, fanoutCPU.map { $0 <= 100 })))
        return rows + targets
    }
}
