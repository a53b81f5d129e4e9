import Foundation
import Testing
@testable import Webhooks

/// The retry schedule of the outbox (what the store keeps is the conformance suite's:
/// `WebhookStorageConformance`).
@Suite("The webhook outbox")
struct OutboxTests {
    @Test("the retry schedule doubles from the first wait to the longest, jittered within ±20%, and ends after the last attempt")
    func schedule() {
        let schedule = RetrySchedule()
        for attempts in 1...schedule.maxAttempts {
            let nominal = min(5 * pow(2, Double(attempts - 1)), 86_400)
            #expect(schedule.nominal(after: attempts) == .seconds(nominal))
            for draw in [0, 0.5, 0.999_999] {
                let wait = schedule.wait(after: attempts, draw: draw)
                if attempts == schedule.maxAttempts {
                    #expect(wait == nil)
                } else {
                    let seconds = try! #require(wait).seconds
                    #expect(seconds >= nominal * 0.8 - 1e-9 && seconds <= min(nominal * 1.2, 86_400) + 1e-9)
                }
            }
        }
        #expect(schedule.nominal(after: 1) == .seconds(5) && schedule.nominal(after: 40) == .seconds(86_400))
    }
}
