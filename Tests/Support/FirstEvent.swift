/// The first element of `sequence` that satisfies `predicate`, or nil when
/// `timeout` passes first (the iteration is then cancelled).
public func firstEvent<S: AsyncSequence & Sendable>(
    of sequence: S, within timeout: Duration, where predicate: @escaping @Sendable (S.Element) -> Bool
) async -> S.Element? where S.Element: Sendable {
    await withTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            do {
                for try await element in sequence where predicate(element) { return element }
            } catch {}
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
