import Foundation

/// The built `mqtt-probe` beside this test binary.
var probeExecutable: String {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("mqtt-probe").path
}

