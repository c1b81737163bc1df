// swift-tools-version: 6.1
// The benchmark harness of blegateway: a separate package, so that
// `swift build` / `swift test` of the gateway never build it. `make bench`
// builds it in release mode and runs `bench`; `make bench-check` only
// compiles it (a cheap check that it still builds against the main package).
import PackageDescription

let package = Package(
    name: "blegateway-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "blegateway", path: ".."),
    ],
    targets: [
        // libdbus for the C baseline tool: the raw floor the gateway is
        // measured against, with no Swift layer in between.
        .systemLibrary(name: "CLibDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // A BlueZ-shaped responder: one connected device whose characteristic
        // answers ReadValue at once and notifies timestamped values at a
        // requested rate.
        .executableTarget(name: "bench-responder", dependencies: [.product(name: "DBus", package: "blegateway")]),
        // The raw D-Bus baselines (ReadValue round trips, a signal receiver,
        // a discovery listener, a startup probe), in C over libdbus.
        .executableTarget(name: "dbus-floor", dependencies: ["CLibDBus"]),
        // The SSE load client: many streams on one epoll loop, checks the
        // id and value sequences, measures latency from the embedded
        // timestamp.
        .executableTarget(name: "sse-load"),
        // The state store's event log alone: append throughput and commit
        // latency at several batch settings and durabilities.
        .executableTarget(name: "store-bench", dependencies: [.product(name: "PersistedState", package: "blegateway")]),
        // The runner: starts everything, drives the load, writes the report.
        .executableTarget(name: "bench"),
    ],
    swiftLanguageModes: [.v6]
)
