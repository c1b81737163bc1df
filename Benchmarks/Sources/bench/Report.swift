import Foundation

/// One line of the report: a gateway figure beside the peer's (the Bleak +
/// aiohttp gateway) and the raw baseline's.
struct Row {
    enum Better { case lower, higher, none }

    var section: String
    var metric: String
    var gateway: Double?
    var peer: Double? = nil
    var baseline: Double?
    var unit: String
    var better: Better
    var note: String = ""

    /// gateway ÷ baseline.
    var ratio: Double? {
        guard let gateway, let baseline, baseline != 0 else { return nil }
        return gateway / baseline
    }

    /// gateway ÷ peer.
    var peerRatio: Double? {
        guard let gateway, let peer, peer != 0 else { return nil }
        return gateway / peer
    }

    var json: [String: Any] {
        var object: [String: Any] = ["section": section, "metric": metric, "unit": unit, "note": note]
        if let gateway { object["gateway"] = gateway }
        if let peer { object["peer"] = peer }
        if let baseline { object["baseline"] = baseline }
        if let ratio { object["ratio"] = (ratio * 1000).rounded() / 1000 }
        if let peerRatio { object["peer_ratio"] = (peerRatio * 1000).rounded() / 1000 }
        object["better"] = better == .lower ? "lower" : better == .higher ? "higher" : "n/a"
        return object
    }
}

enum Format {
    static func number(_ value: Double?, unit: String = "") -> String {
        guard let value else { return "—" }
        let text: String
        if value == value.rounded(), abs(value) < 1e15 {
            text = grouped(Int(value))
        } else if abs(value) >= 100 {
            text = grouped(Int(value.rounded()))
        } else if abs(value) >= 10 {
            text = String(format: "%.1f", value)
        } else {
            text = String(format: "%.2f", value)
        }
        return unit.isEmpty ? text : "\(text) \(unit)"
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out += "," }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }

    static func ratio(_ row: Row) -> String { ratio(row.ratio) }

    static func ratio(_ ratio: Double?) -> String {
        guard let ratio else { return "—" }
        return String(format: ratio >= 10 ? "%.0f×" : ratio >= 1 ? "%.2f×" : "%.3f×", ratio)
    }
}

/// Renders the Markdown report.
struct MarkdownReport {
    var title: String
    var machine: [(String, String)]
    var load: [(String, String)]
    var targets: [TargetRow]
    var timings: [(String, Double)]
    var rows: [Row]
    var phaseNotes: [String]
    var hotSpots: [String]

    func render() -> String {
        var out = "# \(title)\n\n"
        out += "## Targets\n\n" + TargetRow.table(targets) + "\n"
        out += "## Machine\n\n| | |\n|---|---|\n"
        for (key, value) in machine { out += "| \(key) | \(value) |\n" }
        out += "\n## Load on the machine during the run\n\n| | |\n|---|---|\n"
        for (key, value) in load { out += "| \(key) | \(value) |\n" }
        if !timings.isEmpty {
            out += "\n## Phases\n\n| phase | seconds |\n|---|---:|\n"
            for (phase, seconds) in timings { out += "| \(phase) | \(Format.number(seconds)) |\n" }
        }
        out += "\n## Figures\n\n"
        out += "Every gateway figure beside the peer's (a small Bleak + aiohttp gateway, Benchmarks/peer/, on the same "
        out += "responder and bus) and a raw libdbus baseline, measured in the same run; ÷ peer = blegateway ÷ peer, "
        out += "÷ raw = blegateway ÷ raw (for latency, CPU and memory lower is better; for rates higher is better).\n"
        var section = ""
        for row in rows {
            if row.section != section {
                section = row.section
                out += "\n### \(section)\n\n| metric | blegateway | peer | raw baseline | ÷ peer | ÷ raw | notes |\n"
                out += "|---|---:|---:|---:|---:|---:|---|\n"
            }
            out += "| \(row.metric) | \(Format.number(row.gateway, unit: row.unit)) | \(Format.number(row.peer, unit: row.unit)) | "
            out += "\(Format.number(row.baseline, unit: row.unit)) | \(Format.ratio(row.peerRatio)) | \(Format.ratio(row)) | \(row.note) |\n"
        }
        if !phaseNotes.isEmpty {
            out += "\n## Notes on the run\n\n"
            for note in phaseNotes { out += "- \(note)\n" }
        }
        if !hotSpots.isEmpty {
            out += "\n## Observations\n\n"
            for spot in hotSpots { out += "- \(spot)\n" }
        }
        return out
    }
}
