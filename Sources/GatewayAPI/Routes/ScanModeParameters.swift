import BlueZ
import HTTPServer

/// How a scan listens, read alike from `GET /v1/scan`'s query and
/// `POST /v1/scan`'s body: `mode` (`active`, the default, or `passive`),
/// the advertisement patterns of a passive scan (`pattern` in the query,
/// repeated or comma-separated; `patterns` in the body, an array; each
/// `start:type:hex`, as `0:ff:4c00`), and `fallback` (`low-duty`: scan in
/// short active windows where bluetoothd offers no advertisement monitor;
/// `none`, the default: such a passive scan is a 403). An active scan
/// ignores patterns and fallback.
struct ScanModeParameters {
    static let names: Set<String> = ["mode", "patterns", "fallback"]

    var mode: String?
    var patterns: [String] = []
    var fallback: String?

    init(query request: Request) {
        mode = request.query["mode"]
        patterns = request.query.values(for: "pattern").flatMap {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        fallback = request.query["fallback"]
    }

    init(body: JSONBody) throws(Problem) {
        mode = try body["mode"].string(maxLength: 16)
        patterns = try body["patterns"].strings() ?? []
        fallback = try body["fallback"].string(maxLength: 16)
    }

    /// The scan mode; a passive scan without patterns takes those derived
    /// from `filter` (`AdvertisementPattern.derived`). `patternName` is the
    /// parameter's name in problems (`pattern` or `patterns`).
    func scanMode(filter: DiscoveryFilter, patternName: String) throws(Problem) -> ScanMode {
        // Checked whatever the mode: a malformed value is a 400 even where
        // it would not apply (an active scan ignores patterns and fallback).
        var parsed: [AdvertisementPattern] = []
        for text in patterns {
            guard let pattern = AdvertisementPattern(parsing: text) else {
                throw Problem.invalidParameter(
                    patternName, "'\(text)' is not a pattern start:type:hex (0:ff:4c00: manufacturer data of 0x004c)")
            }
            if let problem = pattern.problem { throw Problem.invalidParameter(patternName, problem) }
            parsed.append(pattern)
        }
        let lowDuty: LowDutyDiscovery?
        switch fallback ?? "none" {
        case "none": lowDuty = nil
        case "low-duty": lowDuty = LowDutyDiscovery()
        case let other: throw Problem.invalidParameter("fallback", "'\(other)' is none or low-duty")
        }
        switch mode ?? "active" {
        case "active":
            return .active
        case "passive":
            if parsed.isEmpty { parsed = AdvertisementPattern.derived(from: filter) }
            guard !parsed.isEmpty else {
                throw Problem.invalidParameter(
                    patternName,
                    "a passive scan needs advertisement patterns (start:type:hex, as 0:ff:4c00) or a filter they can be derived from (manufacturer, service_data, services, name or name_prefix)"
                )
            }
            return .passive(patterns: parsed, fallback: lowDuty)
        case let other:
            throw Problem.invalidParameter("mode", "'\(other)' is active or passive")
        }
    }
}
