import Foundation
import StorePorts
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

    @Test("attempts in flight are capped by host and port: two endpoints of one origin share the cap, another origin has its own; the endpoints of a full origin are left out")
    func inFlightByOrigin() {
        func due(_ id: Int64, _ endpoint: Int64, _ url: String) -> DueDelivery {
            DueDelivery(id: id, webhookID: endpoint, changeSeq: id, attempts: 0, nextAt: 0, url: url, key: Data())
        }
        var inFlight = InFlight()
        let a = (1...3).map { due($0, 1, "http://Hooks.example:8080/a") }
        let b = (4...6).map { due($0, 2, "http://hooks.example:8080/b") }
        let c = (7...9).map { due($0, 3, "https://other.example/c") }
        let admitted = inFlight.admit(a + b + c, cap: 4)
        #expect(admitted.map(\.id) == [1, 2, 3, 4, 7, 8, 9])
        for delivery in admitted { inFlight.add(delivery) }
        #expect(inFlight.count == 7 && inFlight.full(cap: 4) == [1, 2])
        inFlight.remove(a[0])
        #expect(inFlight.full(cap: 4).isEmpty && inFlight.admit(b, cap: 4).map(\.id) == [4])
        for delivery in admitted.dropFirst() { inFlight.remove(delivery) }
        #expect(inFlight.count == 0 && inFlight.full(cap: 1).isEmpty && inFlight.admit(a, cap: 1).map(\.id) == [1])
        #expect(InFlight.origin(of: "https://x.example/p?q=1") == InFlight.origin(of: "HTTPS://X.example:443/other"))
        #expect(InFlight.origin(of: "http://x.example/p") != InFlight.origin(of: "http://x.example:8080/p"))
    }
}
