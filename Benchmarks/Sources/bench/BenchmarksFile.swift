import Foundation

/// BENCHMARKS.md: its summary and its full report are written by a complete
/// run, between marker comments; everything else in it (how to read the
/// figures, hot spots, measurements made by hand) is kept as it is.
enum BenchmarksFile {
    static let summaryBegin = "<!-- make bench: summary -->"
    static let summaryEnd = "<!-- /make bench: summary -->"
    static let reportBegin = "<!-- make bench: report -->"
    static let reportEnd = "<!-- /make bench: report -->"

    /// Replaces both generated parts; a problem (nil when done) when the
    /// file or a marker is missing.
    static func update(_ path: String, summary: String, report: String) -> String? {
        guard var text = try? String(contentsOfFile: path, encoding: .utf8) else { return "cannot read \(path)" }
        // The full report's title becomes a section of BENCHMARKS.md, and its
        // sections one level lower.
        let demoted = report.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("# ") ? "## Full report: " + $0.dropFirst(2) : $0.hasPrefix("#") ? "#" + $0 : String($0) }
            .joined(separator: "\n")
        for (begin, end, body) in [(summaryBegin, summaryEnd, summary), (reportBegin, reportEnd, demoted)] {
            guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else {
                return "no \(begin) … \(end) in \(path)"
            }
            text.replaceSubrange(start.upperBound..<stop.lowerBound, with: "\n" + body.trimmingCharacters(in: .newlines) + "\n")
        }
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            return "cannot write \(path): \(error)"
        }
        return nil
    }
}
