// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "blegateway",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
        .library(name: "BlueZSimulator", targets: ["BlueZSimulator"]),
        .library(name: "PersistedState", targets: ["PersistedState"]),
        .library(name: "MQTT", targets: ["MQTT"]),
        .library(name: "MQTTBridge", targets: ["MQTTBridge"]),
        .library(name: "GatewayCoreBluetooth", targets: ["GatewayCoreBluetooth"]),
        .executable(name: "bluez-sim", targets: ["bluez-sim"]),
        .executable(name: "blegateway", targets: ["blegateway"]),
        .executable(name: "blegateway-client", targets: ["blegateway-client"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // Waiting without losing a wake-up or a cancellation: the waiter
        // queue and what is built on it (semaphore, lanes, promises, single
        // flight), and durations in the units C APIs and logs count; below
        // every other module so that every layer can use them.
        .target(
            name: "AsyncPrimitives", dependencies: [.product(name: "DequeModule", package: "swift-collections")]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "DBus",
            dependencies: ["CDBus", "AsyncPrimitives", .product(name: "Metrics", package: "swift-metrics")]
        ),
        // libmosquitto's headers (Debian's libmosquitto-dev); the library
        // itself is opened with dlopen when the first MQTT client is made, so
        // that a gateway without --mqtt loads neither it nor its TLS
        // libraries (see include/CMosquitto.h).
        .target(name: "CMosquitto"),
        // MQTT knows nothing of Bluetooth or HTTP.
        .target(
            name: "MQTT",
            dependencies: ["CMosquitto", "AsyncPrimitives", .product(name: "DequeModule", package: "swift-collections")]
        ),
        .target(
            name: "HTTPServer",
            dependencies: [
                "CMicroHTTPD", "AsyncPrimitives",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "BlueZ",
            dependencies: ["DBus", "AsyncPrimitives", .product(name: "Metrics", package: "swift-metrics")]
        ),
        // Kept connections, standing subscriptions and the event log, in
        // SQLite: knows nothing of HTTP, D-Bus or Bluetooth.
        .target(
            name: "PersistedState",
            dependencies: ["CSQLite", "AsyncPrimitives", .product(name: "Logging", package: "swift-log")]
        ),
        // The simulator is an independent reading of bluetoothd: it must not
        // depend on the BlueZ client module, so a bug shared by both cannot hide.
        // Scenario files are read with libyaml (Debian's libyaml-dev) rather
        // than a Swift YAML package, which would bring Foundation and its ICU
        // data into the gateway's executable (see BENCHMARKS.md).
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        .target(name: "BlueZSimulator", dependencies: ["DBus", "CYAML"]),
        .executableTarget(
            name: "bluez-sim",
            dependencies: [
                "BlueZSimulator", "DBus", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A JSON value, its compact writer and its parser: knows nothing of
        // HTTP, MQTT or Bluetooth, so that the core and both doors share it.
        .target(name: "JSONValue"),
        // What the gateway does, as typed commands, results and errors: knows
        // nothing of HTTP or MQTT (GatewayAPI and MQTTBridge are its doors).
        // It holds the gateway's event log (persisted in PersistedState's
        // store) and the standing subscriptions PersistedState describes;
        // storing them, and the kept devices, is the doors' (through the
        // core's protocols for the latter).
        .target(
            name: "GatewayCore",
            dependencies: [
                "BlueZ", "AsyncPrimitives", "JSONValue", "PersistedState", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .target(
            name: "GatewayAPI",
            dependencies: [
                "GatewayCore", "JSONValue", "HTTPServer", "BlueZ", "PersistedState", "AsyncPrimitives",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // GnuTLS (libmicrohttpd's TLS library), for `blegateway health`
        // over https.
        .systemLibrary(
            name: "CGnuTLS",
            pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"])]
        ),
        // Gateway events and commands over MQTT: the MQTT door, beside
        // GatewayAPI's routes. Commands run on GatewayCore; GatewayAPI gives
        // the encodings both doors share and its hooks (Sources/GatewayAPI/Bridging).
        .target(
            name: "MQTTBridge",
            dependencies: ["GatewayCore", "GatewayAPI", "BlueZ", "MQTT", "AsyncPrimitives", .product(name: "Logging", package: "swift-log")]
        ),
        // Core Bluetooth's API over the gateway's public HTTP + SSE API: a
        // client, so it depends on no server module.
        .target(name: "GatewayCoreBluetooth"),
        // The version both executables print.
        .target(name: "GatewayVersion"),
        // The server. It links no Foundation (FoundationEssentials only) and
        // hands the client commands over to blegateway-client.
        .executableTarget(
            name: "blegateway",
            dependencies: [
                "GatewayAPI", "GatewayCore", "GatewayVersion", "BlueZ", "BlueZSimulator", "HTTPServer", "DBus", "MQTT",
                "MQTTBridge", "PersistedState", "CGnuTLS", "AsyncPrimitives",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // `blegateway scan`, `read`, ...: Core Bluetooth's API over HTTP
        // (URLSession, so Foundation with libcurl and ICU) in a program of
        // its own, installed beside blegateway.
        .executableTarget(
            name: "blegateway-client",
            dependencies: [
                "GatewayCoreBluetooth", "GatewayVersion",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        .target(name: "TestSupport", dependencies: ["DBus", "CDBus", "MQTT"], path: "Tests/Support"),
        .testTarget(name: "AsyncPrimitivesTests", dependencies: ["AsyncPrimitives", "TestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "BlueZTests", dependencies: ["BlueZ", "DBus"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "BlueZIntegrationTests", dependencies: ["BlueZ", "BlueZSimulator", "DBus", "TestSupport"]
        ),
        .testTarget(name: "BlueZSimulatorTests", dependencies: ["BlueZSimulator", "DBus", "TestSupport"]),
        // A program the store's tests run and kill (SIGKILL mid-append), or
        // run as another user (a directory it cannot write).
        .executableTarget(
            name: "persisted-state-probe", dependencies: ["PersistedState"], path: "Tests/PersistedStateProbe"
        ),
        .testTarget(
            name: "PersistedStateTests", dependencies: ["PersistedState", "persisted-state-probe", "TestSupport"]
        ),
        .testTarget(
            name: "GatewayCoreTests",
            dependencies: ["GatewayCore", "JSONValue", "BlueZ", "BlueZSimulator", "DBus", "PersistedState", "TestSupport"]
        ),
        .testTarget(name: "GatewayAPITests", dependencies: ["GatewayAPI", "GatewayCore", "HTTPServer", "PersistedState", "TestSupport"]),
        // A process of its own that uses MQTT (Last Will tests, throughput).
        .executableTarget(name: "mqtt-probe", dependencies: ["MQTT"], path: "Tests/MQTTProbe"),
        // Real mosquitto brokers; depends on mqtt-probe only so that it is built first.
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "TestSupport", "mqtt-probe"]),
        .testTarget(
            name: "MQTTBridgeTests",
            dependencies: ["MQTTBridge", "MQTT", "GatewayAPI", "BlueZ", "BlueZSimulator", "DBus", "TestSupport"]
        ),
        // The real blegateway process, driven over HTTP; it depends on the
        // executables only so that they are built first (blegateway-client
        // runs the client commands blegateway hands over).
        .testTarget(
            name: "GatewayIntegrationTests",
            dependencies: ["blegateway", "blegateway-client", "BlueZSimulator", "GatewayAPI", "BlueZ", "DBus", "TestSupport", "GatewayCoreBluetooth"]
        ),
        .testTarget(name: "GatewayCoreBluetoothTests", dependencies: ["GatewayCoreBluetooth"]),
    ],
    swiftLanguageModes: [.v6]
)
