// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "blegateway",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
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
        .target(name: "DBus", dependencies: ["CDBus"]),
        .target(
            name: "HTTPServer",
            dependencies: [
                "CMicroHTTPD",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(name: "BlueZ", dependencies: ["DBus"]),

        .target(name: "TestSupport", dependencies: ["DBus", "CDBus"], path: "Tests/Support"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ"]),
    ],
    swiftLanguageModes: [.v6]
)
