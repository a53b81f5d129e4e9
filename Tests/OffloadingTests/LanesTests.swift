import Dispatch
import Foundation
import Offloading
import Synchronization
import Testing
import TestSupport

@Suite("Lanes: synchronous work, at most so many at once")
struct LanesTests {
    /// How many bodies ran at once, at most, out of `jobs` run through lanes of `width`;
    /// each body holds its lane until `width` of them have once been in, and a moment more,
    /// so that the lanes are seen full, and a body past the width would be seen beside them.
    final class Counts: Sendable {
        let running = Atomic(0), most = Atomic(0), finished = Atomic(0)
    }

    static func mostAtOnce(width: Int, jobs: Int) async throws -> (most: Int, finished: Int) {
        let lanes = Lanes(width: width)
        let counts = Counts()
        let deadline = ContinuousClock.now + patience
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<jobs {
                group.addTask {
                    try await lanes.run {
                        let now = counts.running.add(1, ordering: .relaxed).newValue
                        _ = counts.most.max(now, ordering: .relaxed)
                        // Until the lanes have once been full (the last bodies never see them
                        // full again), however late the pool's threads come.
                        while counts.most.load(ordering: .relaxed) < width, ContinuousClock.now < deadline { usleep(1_000) }
                        usleep(2_000)
                        counts.running.subtract(1, ordering: .relaxed)
                        counts.finished.add(1, ordering: .relaxed)
                    }
                }
            }
            try await group.waitForAll()
        }
        return (counts.most.load(ordering: .relaxed), counts.finished.load(ordering: .relaxed))
    }

    @Test("never more than the width at once, the width reached, and every body run", arguments: [1, 2, 3])
    func bounded(width: Int) async throws {
        let (most, finished) = try await Self.mostAtOnce(width: width, jobs: 12)
        #expect(most == width)
        #expect(finished == 12)
    }

    @Test("a body's error reaches its caller and frees its lane")
    func errors() async throws {
        struct Failed: Error {}
        let lanes = Lanes(width: 1)
        await #expect(throws: Failed.self) { try await lanes.run { throw Failed() } }
        #expect(try await lanes.run { 7 } == 7)
    }
}
