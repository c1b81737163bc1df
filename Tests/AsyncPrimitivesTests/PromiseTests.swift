import AsyncPrimitives
import Testing

private struct Failure: Error, Equatable {
    let reason: String
}

@Suite struct PromiseTests {
    @Test func aResultResolvedBeforeTheWaitIsReturned() async throws {
        let promise = Promise<Int, Failure>()
        #expect(promise.resolve(.success(7)))
        #expect(!promise.resolve(.success(8)))
        let result = await promise.wait(deadline: nil, timeout: Failure(reason: "late"), cancelled: Failure(reason: "cancelled"))
        #expect(try result.get() == 7)
    }

    @Test func aWaiterIsWokenByTheResolution() async throws {
        let promise = Promise<Int, Failure>()
        let waiter = Task {
            await promise.wait(deadline: .now + .seconds(30), timeout: Failure(reason: "late"), cancelled: Failure(reason: "cancelled"))
        }
        try await Task.sleep(for: .milliseconds(10))
        promise.resolve(.success(1))
        #expect(try await waiter.value.get() == 1)
    }

    @Test func theDeadlineResolvesWithTheTimeout() async {
        let promise = Promise<Int, Failure>()
        let result = await promise.wait(deadline: .now + .milliseconds(20), timeout: Failure(reason: "late"), cancelled: Failure(reason: "cancelled"))
        #expect(result.failure == Failure(reason: "late"))
        #expect(!promise.resolve(.success(1)))
    }

    @Test func cancellationResolvesWithCancelled() async {
        let promise = Promise<Int, Failure>()
        let waiter = Task {
            await promise.wait(deadline: nil, timeout: Failure(reason: "late"), cancelled: Failure(reason: "cancelled"))
        }
        waiter.cancel()
        #expect(await waiter.value.failure == Failure(reason: "cancelled"))
    }

    @Test func aPromiseResolvedBeforeTheCancellationKeepsItsResult() async throws {
        let promise = Promise<Int, Failure>()
        promise.resolve(.success(3))
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await promise.wait(deadline: nil, timeout: Failure(reason: "late"), cancelled: Failure(reason: "cancelled"))
        }
        #expect(try await waiter.value.get() == 3)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
