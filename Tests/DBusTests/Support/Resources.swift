import Foundation

/// This process's D-Bus loop threads (named `dbus-loop`): other suites
/// running in parallel start threads of their own (servers, child processes'
/// readers, the concurrency pool), which a count of every thread would
/// mistake for a leak.
func dbusLoopThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    let loops = tasks.count { task in
        let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
        return name?.trimmingCharacters(in: .whitespacesAndNewlines) == "dbus-loop"
    }
    return loops
}

/// What a descriptor of this process refers to, when that is unique while
/// the kernel lives: a socket's or pipe's inode ("socket:[123]"). Another
/// test's descriptor that reuses a closed one's number is not mistaken for
/// it. (An eventfd's id is reused as soon as it is freed.)
func descriptorIdentity(_ fd: Int32) -> String? {
    guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
        target.hasPrefix("socket:[") || target.hasPrefix("pipe:[")
    else { return nil }
    return target
}

/// The identities of every descriptor open in this process.
func openDescriptorIdentities() -> Set<String> {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return Set(names.compactMap { Int32($0).flatMap(descriptorIdentity) })
}

/// A reference that does not keep its object alive.
final class Weak<Object: AnyObject & Sendable>: Sendable {
    weak let object: Object?
    init(_ object: Object) { self.object = object }
}
