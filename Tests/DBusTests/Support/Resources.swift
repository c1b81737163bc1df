import Foundation

/// Open file descriptors of this process, and its D-Bus loop threads (named
/// `dbus-loop`): other suites running in parallel start threads of their
/// own (servers, child processes' readers, the concurrency pool), which a
/// count of every thread would mistake for a leak.
func processResources() -> (fds: Int, threads: Int) {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    let loops = tasks.count { task in
        let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
        return name?.trimmingCharacters(in: .whitespacesAndNewlines) == "dbus-loop"
    }
    return (fds, loops)
}
