import Foundation
import Glibc

// bench: the benchmark runner (`make bench`). Starts a private dbus-daemon,
// the responder (or the simulator), the release gateway and the peer (a
// small Bleak + aiohttp gateway, Benchmarks/peer/); drives load from
// separate processes; writes bench-results/<timestamp>/report.md and
// report.json, and after a complete run the generated parts of
// BENCHMARKS.md (`--no-update` leaves it alone).
//
//   bench [--root DIR] [--out DIR] [--duration S] [--churn-seconds S]
//         [--advertisers N] [--advertising-interval S] [--fanout 100,1000]
//         [--fanout-rate R] [--settle-seconds S] [--quiet-wait S] [--no-update]
//         [--only PHASE,...]
//
// Phases: startup, memory, economy, read, notify, fanout, churn, state, scan, burst, bleak, fleet,
// curves; a
// phase alone runs it for every subject (raw floor, gateway, peer), and
// raw-PHASE, gateway-PHASE or peer-PHASE for one (`--only read,peer-notify`).
// The environment can set BENCH_PHASES, BENCH_DURATION, BENCH_CHURN_SECONDS,
// BENCH_SETTLE_SECONDS and BENCH_QUIET_WAIT too (`make bench-soak` sets the
// churn to 600 s), and for the curves phase BENCH_CURVE_SECONDS (seconds a
// point, default 3) and BENCH_CURVES (a subset of reads, notify, fanout,
// kept, scan).

func usage(_ message: String) -> Never {
    var text = "bench: \(message)\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(64)
}

_ = Bench.started
var options = Options()
let environment = ProcessInfo.processInfo.environment
if let value = environment["BENCH_DURATION"].flatMap(Double.init) { options.duration = value }
if let value = environment["BENCH_CHURN_SECONDS"].flatMap(Double.init) { options.churnSeconds = value }
if let value = environment["BENCH_QUIET_WAIT"].flatMap(Double.init) { options.quietWait = value }
if let value = environment["BENCH_SETTLE_SECONDS"].flatMap(Double.init) { options.settleSeconds = value }
if let value = environment["BENCH_CURVE_SECONDS"].flatMap(Double.init) { options.curveSeconds = max(1, value.rounded()) }
if let value = environment["BENCH_CURVES"] {
    options.curves = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    if let unknown = options.curves.first(where: { !Bench.curveNames.contains($0) }) {
        usage("unknown curve \(unknown) (curves: \(Bench.curveNames.joined(separator: ", ")))")
    }
}
func phases(_ list: String) -> Set<String> {
    let (phases, problem) = Options.phases(list)
    if let problem { usage(problem) }
    return phases
}
if let value = environment["BENCH_PHASES"] { options.only = phases(value) }
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument == "--no-update" {
        options.update = false
        continue
    }
    guard let value = arguments.popFirst() else { usage("\(argument) needs a value") }
    switch argument {
    case "--root": options.root = value
    case "--out": options.out = value
    case "--duration": options.duration = Double(value) ?? options.duration
    case "--churn-seconds": options.churnSeconds = Double(value) ?? options.churnSeconds
    case "--advertisers": options.advertisers = Int(value) ?? options.advertisers
    case "--advertising-interval": options.advertisingInterval = Double(value) ?? options.advertisingInterval
    case "--fanout": options.fanout = value.split(separator: ",").compactMap { Int($0) }
    case "--quiet-wait": options.quietWait = Double(value) ?? options.quietWait
    case "--fanout-rate": options.fanoutRate = Double(value) ?? options.fanoutRate
    case "--settle-seconds": options.settleSeconds = Double(value) ?? options.settleSeconds
    case "--only": options.only = phases(value)
    default: usage("unknown option \(argument)")
    }
}
options.root = URL(fileURLWithPath: options.root).standardizedFileURL.path
let stamp: String = {
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyyMMdd-HHmmss"
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date())
}()
if options.out.isEmpty { options.out = options.root + "/bench-results/" + stamp }
mkdir(options.root + "/bench-results", 0o755)
// Children must not die with the runner's SIGPIPE when a tool exits early.
signal(SIGPIPE, SIG_IGN)

let bench = Bench(options: options)
let revision: String = {
    guard let child = try? Child("git", ["/bin/sh", "-c", "git -C \"$0\" describe --always --dirty 2>/dev/null", options.root],
                                 cpu: nil, log: "/dev/null")
    else { return "unknown" }
    return child.readRest(timeout: 10).first ?? "unknown"
}()
bench.results["revision"] = revision
var failure: String?
do {
    try bench.run()
} catch {
    failure = "\(error)"
    bench.say("FAILED: \(error)")
}
bench.stopAll()
let elapsed = Clock.seconds() - Bench.started
bench.results["started_utc"] = stamp
bench.results["elapsed_s"] = (elapsed * 10).rounded() / 10
bench.results["options"] = [
    "duration_s": options.duration, "churn_s": options.churnSeconds, "advertisers": options.advertisers,
    "advertising_interval_s": options.advertisingInterval, "fanout": options.fanout, "fanout_rate": options.fanoutRate,
    "settle_s": options.settleSeconds, "curve_point_s": options.curveSeconds, "phases": options.only.isEmpty ? ["all"] : options.only.sorted(),
    "placement": "gateway or peer pinned to CPU 1; dbus-daemon, responder/simulator and load generators to CPU 0; raw baseline tools to CPU 1",
]
let targets = bench.judgeTargets()
bench.results["targets"] = targets.map(\.json)
bench.results["figures"] = bench.figures
bench.results["phase_seconds"] = bench.timings.map { ["phase": $0.0, "seconds": ($0.1 * 10).rounded() / 10] }
bench.results["rows"] = bench.rows.map(\.json)
bench.results["cpu_by_phase"] = Dictionary(bench.loadByPhase.map { ($0.0, $0.1) }, uniquingKeysWith: { $1 })
if let failure { bench.results["failure"] = failure }

let machine = bench.results["machine"] as? [String: Any] ?? [:]
let before = bench.results["idle_before"] as? [String: Any] ?? [:]
let after = bench.results["idle_after"] as? [String: Any] ?? [:]
let foreign = bench.loadByPhase.compactMap { $0.1["foreign"] }
let report = MarkdownReport(
    title: "blegateway benchmark — \(stamp) UTC",
    machine: [
        ("CPU", "\(machine["cpu"] ?? "?") × \(machine["cores"] ?? "?")"), ("memory", "\(machine["memory_mib"] ?? "?") MiB"),
        ("OS, kernel", "\(machine["os"] ?? "?"), \(machine["kernel"] ?? "?")"), ("Swift", "\(machine["swift"] ?? "?")"),
        ("build", "\(machine["build"] ?? "?"); revision \(revision)"),
        ("libdbus, libmicrohttpd, wrk", "\(machine["libdbus"] ?? "?"), \(machine["libmicrohttpd"] ?? "?"), \(machine["wrk"] ?? "?")"),
        ("placement", "gateway or peer alone on CPU 1 (a raw baseline tool in its place); dbus-daemon, responder/simulator, wrk and sse-load on CPU 0"),
        ("peer", "Benchmarks/peer/peer.py on CPython \(machine["python"] ?? "?"), \(machine["peer_packages"] ?? "?")"),
        ("run", "\(Format.number(elapsed)) s; measurement windows \(options.duration) s; churn \(options.churnSeconds) s"),
    ],
    load: [
        ("machine busy before the run (3 s, nothing of ours running)", "\(before["busy_percent"] ?? "?")% of all cores; load average \(before["load_average"] ?? "?"); waited \(before["waited_s"] ?? 0) s for a quiet moment (at most \(Int(options.quietWait)) s)"),
        ("machine busy after the run (2 s)", "\(after["busy_percent"] ?? "?")% of all cores; load average \(after["load_average"] ?? "?")"),
        ("other processes during the measurement windows", foreign.isEmpty ? "—" : "median \(String(format: "%.1f", median(foreign)))%, max \(String(format: "%.1f", foreign.max() ?? 0))% of all cores (per window in report.json, cpu_by_phase.*.foreign)"),
    ],
    targets: targets,
    timings: bench.timings,
    rows: bench.rows,
    phaseNotes: bench.notes + (failure.map { ["The run failed: \($0)"] } ?? []),
    hotSpots: bench.observations)
let markdown = report.render()
do {
    try markdown.write(toFile: options.out + "/report.md", atomically: true, encoding: .utf8)
    try JSONValue.encode(bench.results).write(toFile: options.out + "/report.json", atomically: true, encoding: .utf8)
} catch {
    usage("cannot write the report: \(error)")
}
if options.update, options.complete, failure == nil {
    let summary = "Run \(stamp) UTC, revision \(revision), \(Format.number(elapsed)) s; "
        + "the full report is at the end of this file.\n\n" + TargetRow.table(targets)
    switch BenchmarksFile.update(options.root + "/BENCHMARKS.md", summary: summary, report: markdown) {
    case nil: bench.say("BENCHMARKS.md: summary and full report updated")
    case let problem?: bench.say("BENCHMARKS.md left as it was: \(problem)")
    }
}
bench.say("report: \(options.out)/report.md (\(Format.number(elapsed)) s)")
exit(failure == nil ? 0 : 1)
