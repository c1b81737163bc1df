// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "blegateway",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
    ],
    dependencies: [],
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
        .target(name: "TestSupport", dependencies: ["DBus", "CDBus"], path: "Tests/Support"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .target(name: "BlueZ"),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ"]),
    ],
    swiftLanguageModes: [.v6]
)
