import Foundation

extension Bench {
    /// The container image (docker/Dockerfile), built from this checkout by
    /// `docker/container-check.sh --build-only` with the engine `make
    /// docker-run-check` uses (podman through ../shared/container here),
    /// tagged `blegateway:bench`. Last, alone: a cold build compiles the
    /// gateway in the build stage, which would disturb any other phase.
    /// Where containers cannot run (a chroot, no engine, not root) the
    /// script says so and the figure is not measured.
    func image() throws {
        say("image: docker/Dockerfile built with docker/container-check.sh --build-only")
        let build = try Child(
            "image-build", ["/usr/bin/env", "bash", options.root + "/docker/container-check.sh", "--build-only"],
            cpu: nil, log: logs + "/image-build.log", environment: ["IMAGE": "blegateway:bench"])
        let lines = build.readRest(timeout: 3600)
        build.finish()
        // "image blegateway:bench built in 215 s; 48 MB (48933968 bytes)"
        guard let line = lines.first(where: { $0.hasPrefix("image ") && $0.hasSuffix(" bytes)") }),
              let open = line.lastIndex(of: "("), let bytes = Double(line[line.index(after: open)...].prefix { $0.isNumber })
        else {
            let said = lines.last ?? "no output"
            notes.append("The container image was not measured: \(said) (logs/image-build.log).")
            say("  image not measured: \(said)")
            return
        }
        let megabytes = bytes / 1_000_000
        results["image"] = ["bytes": bytes, "line": line]
        figure(.gateway, "image_mb", megabytes)
        say("  \(line)")
    }
}
