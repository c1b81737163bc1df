import Glibc

/// The connection resumes that stream writes on one thread put off until
/// the thread calls `StreamWriter.resumeDeferred()` (see there). Touched
/// only by its own thread.
///
/// Per-thread state (a pthread key) on purpose: the deferral belongs to a
/// thread that works in turns and ends each one with `resumeDeferred()`
/// (the gateway's D-Bus connection does, through its end-of-turn hook,
/// `Connection.Configuration.endOfTurn`). A write cannot know which turn it
/// is part of otherwise without every layer between the turn and the write
/// (DBus, BlueZ, the API's sinks) passing a batch down. A thread that never
/// called `resumeDeferred()` has no batch, and its writes resume at once;
/// a thread that ends mid-turn resumes its batch in the key's destructor.
final class DeferredResumes {
    private var controls: [ConnectionControl] = []

    /// This thread's batch, once it has called `resumeDeferred`; nil on
    /// every other thread, whose writes resume at once.
    static var current: DeferredResumes? {
        pthread_getspecific(key).map { Unmanaged<DeferredResumes>.fromOpaque($0).takeUnretainedValue() }
    }

    /// This thread's batch, made on its first call.
    static var ofThisThread: DeferredResumes {
        if let current { return current }
        let batch = DeferredResumes()
        pthread_setspecific(key, Unmanaged.passRetained(batch).toOpaque())
        return batch
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // At the thread's exit: what it wrote last still goes out.
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            let batch = Unmanaged<DeferredResumes>.fromOpaque(pointer)
            batch.takeUnretainedValue().resumeAll()
            batch.release()
        }
        return key
    }()

    /// Queues `control`'s resume, once however often it is queued before
    /// the next `resumeAll`.
    func add(_ control: ConnectionControl) {
        if control.claimDeferredResume() { controls.append(control) }
    }

    func resumeAll() {
        guard !controls.isEmpty else { return }
        let due = controls
        controls.removeAll(keepingCapacity: true)
        for control in due { control.resumeDeferred() }
    }
}
