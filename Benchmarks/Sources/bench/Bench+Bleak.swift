import Foundation

extension Bench {
    /// Notification to a Bleak callback (scripts/bleak-notify-bench.py):
    /// the same Bleak code subscribed through the gateway (blegateway.bleak)
    /// and with Bleak's own BlueZ backend, each alone on a private bus with
    /// the responder. The script runs its own bus, responder and gateway,
    /// so this phase runs after the main bus is gone. Its targets (issue
    /// 30): at least 0.9× native's zero-loss rate, at most 1 ms added at
    /// p50.
    func bleak() throws {
        say("bleak: notification to a Bleak callback, through blegateway and with Bleak's own BlueZ backend")
        let script = try Child(
            "bleak-notify-bench",
            ["/usr/bin/env", "python3", options.root + "/scripts/bleak-notify-bench.py",
             "--gateway-bin", gatewayBinary, "--responder-bin", tool("bench-responder"),
             "--duration", String(options.duration), "--json"],
            cpu: nil, log: logs + "/bleak-notify-bench.log")
        let result = try script.resultJSON(timeout: 1800)
        script.finish()
        results["bleak"] = result
        let native = result["native"] as? [String: Any] ?? [:]
        let through = result["gateway"] as? [String: Any] ?? [:]
        let section = "Notification to a Bleak callback: blegateway.bleak through the gateway against Bleak's own BlueZ backend (baseline), each alone on the bus with the responder"
        let latencyRate = Format.number(result.double("latency_rate"))
        add(Row(section: section, metric: "latency p50 at \(latencyRate)/s", gateway: through.double("p50_ms"),
                baseline: native.double("p50_ms"), unit: "ms", better: .lower,
                note: "from the responder's stamp (value handed to the bus) to the callback"))
        add(Row(section: section, metric: "latency p99 at \(latencyRate)/s", gateway: through.double("p99_ms"),
                baseline: native.double("p99_ms"), unit: "ms", better: .lower))
        add(Row(section: section, metric: "highest zero-loss rate", gateway: through.double("zero_loss_rate"),
                baseline: native.double("zero_loss_rate"), unit: "/s", better: .higher,
                note: "every value reaches the callback, the source is not slowed, and the callback keeps pace (95% of the rate sent); \(Format.number(options.duration)) s windows"))
        let common = result.double("common_rate")
        // A path that did not keep up at that rate (the gateway dropped its
        // stream, say) spent less per value sent: say so beside the figure.
        func caveat(_ subject: [String: Any], _ name: String) -> String {
            subject["common_rate_kept_up"] as? Bool == false ? "; \(name) did NOT keep up at that rate" : ""
        }
        let nativeCPU = native["cpu_us_at_common_rate"] as? [String: Any] ?? [:]
        let throughCPU = through["cpu_us_at_common_rate"] as? [String: Any] ?? [:]
        add(Row(section: section, metric: "receiving script's CPU per value at \(Format.number(common))/s",
                gateway: throughCPU.double("client"), baseline: nativeCPU.double("client"), unit: "µs", better: .lower,
                note: "through the gateway: gateway \(Format.number(throughCPU.double("gateway"), unit: "µs")), dbus-daemon \(Format.number(throughCPU.double("dbus-daemon"), unit: "µs")); native: dbus-daemon \(Format.number(nativeCPU.double("dbus-daemon"), unit: "µs"))\(caveat(through, "the gateway path"))\(caveat(native, "Bleak native"))"))

        let added = through.double("p50_ms") - native.double("p50_ms")
        let best = through.double("zero_loss_rate"), nativeBest = native.double("zero_loss_rate")
        let ratio = nativeBest > 0 ? best / nativeBest : nil
        targets.append(TargetRow(
            target: "Bleak callback through the gateway: zero loss at ≥ 0.9× Bleak native's highest rate",
            measured: Format.number(best, unit: "/s"),
            comparison: "native \(Format.number(nativeBest, unit: "/s")) (\(Format.ratio(ratio)))",
            met: ratio.map { $0 >= 0.9 }))
        targets.append(TargetRow(
            target: "Bleak callback through the gateway: ≤ 1 ms added at p50",
            measured: "\(Format.number(through.double("p50_ms"), unit: "ms")) (\(added < 0 ? "−" : "+")\(Format.number(abs(added), unit: "ms")))",
            comparison: "native \(Format.number(native.double("p50_ms"), unit: "ms"))",
            met: added <= 1))
    }
}
