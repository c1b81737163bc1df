import Foundation

/// Open file descriptors and threads of this process.
func processResources() -> (fds: Int, threads: Int) {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    return (fds, threads)
}
