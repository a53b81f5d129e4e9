import Autodial
import Foundation
import Geometry
import ReportModel
import Testing

/// The planner against a model of the city's clock built from the time zone's offsets alone
/// (no `Calendar`), minute by minute, across both daylight-saving changes of 2026.
@Suite struct CallPlannerTests {
    let planner = CallPlanner(rules: .defaults)
    let zone = TimeZone(identifier: "Europe/Kyiv")!

    static func utc(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    /// The model: the city's minute of the day and weekday (1 Sunday) from the zone's offset.
    func local(_ t: Date) -> (minute: Int, weekday: Int) {
        let seconds = Int(t.timeIntervalSince1970.rounded(.down)) + zone.secondsFromGMT(for: t)
        let days = Int((Double(seconds) / 86_400).rounded(.down))
        // 1970-01-01 was a Thursday (5).
        return ((seconds - days * 86_400) / 60, ((days + 4) % 7 + 7) % 7 + 1)
    }

    func modelLawful(_ t: Date, _ rules: AutodialRules) -> Bool {
        let (minute, weekday) = local(t)
        guard let hours = rules.hours[weekday] else { return false }
        return (hours.from..<hours.to).contains(minute)
    }

    @Test func lawfulHoursOfTheDecision() {
        // 2026-01-15: Kyiv is UTC+2.
        #expect(!planner.isLawful(Self.utc("2026-01-15T06:59:59Z")))
        #expect(planner.isLawful(Self.utc("2026-01-15T07:00:00Z")))
        #expect(planner.isLawful(Self.utc("2026-01-15T17:59:59Z")))
        #expect(!planner.isLawful(Self.utc("2026-01-15T18:00:00Z")))
        // 2026-07-15: UTC+3.
        #expect(!planner.isLawful(Self.utc("2026-07-15T05:59:00Z")))
        #expect(planner.isLawful(Self.utc("2026-07-15T06:00:00Z")))
    }

    @Test func acrossDaylightSavingChanges() {
        // Spring forward on 2026-03-29 (03:00 → 04:00): the evening of the 28th is UTC+2, the morning after UTC+3.
        #expect(planner.nextLawful(atOrAfter: Self.utc("2026-03-28T18:30:00Z")) == Self.utc("2026-03-29T06:00:00Z"))
        // Fall back on 2026-10-25 (04:00 → 03:00).
        #expect(planner.nextLawful(atOrAfter: Self.utc("2026-10-24T17:30:00Z")) == Self.utc("2026-10-25T07:00:00Z"))
        #expect(!planner.isLawful(Self.utc("2026-10-25T06:30:00Z")))
    }

    @Test func nextLawfulAgainstTheMinuteByMinuteModel() throws {
        var rules = AutodialRules.defaults
        rules.hours[1] = nil  // no calls on Sundays
        rules.hours[7] = DailyHours(from: 10 * 60, to: 24 * 60)  // Saturdays until midnight
        let planner = CallPlanner(rules: rules)
        var random = SystemRandomNumberGenerator()
        let spans = [("2026-03-25T00:00:00Z", 8), ("2026-10-21T00:00:00Z", 8), ("2026-06-01T00:00:00Z", 14)]
        for (start, days) in spans {
            let base = Self.utc(start)
            for _ in 0..<150 {
                let t = base.addingTimeInterval(Double(Int.random(in: 0..<(days * 86_400), using: &random)))
                #expect(planner.isLawful(t) == modelLawful(t, rules), "\(t)")
                // The model's answer: the first lawful whole minute (or t itself).
                var expected = t
                if !modelLawful(t, rules) {
                    expected = Date(timeIntervalSince1970: (t.timeIntervalSince1970 / 60).rounded(.up) * 60)
                    while !modelLawful(expected, rules) { expected.addTimeInterval(60) }
                }
                #expect(planner.nextLawful(atOrAfter: t) == expected, "\(t)")
            }
        }
    }

    func campaign(_ id: Int64 = 1, started: String, calls: [String] = []) -> DialerCampaign {
        DialerCampaign(
            campaign: Campaign(id: id, number: "380501234567", startedAt: Self.utc(started), startedBy: .system),
            recentCalls: calls.map(Self.utc))
    }

    @Test func intervalAfterTheLastCall() {
        let c = campaign(started: "2026-05-04T07:00:00Z", calls: ["2026-05-04T07:00:00Z", "2026-05-04T07:05:10Z"])
        #expect(planner.nextCall(for: c) == Self.utc("2026-05-04T07:10:10Z"))
        // Not yet due a second before; due at the instant.
        #expect(planner.due([c], now: Self.utc("2026-05-04T07:10:09Z"), free: 4).isEmpty)
        #expect(planner.due([c], now: Self.utc("2026-05-04T07:10:10Z"), free: 4).count == 1)
        // Overdue since 19:55 Kyiv, but it is 20:00: none till the morning.
        let overdue = campaign(started: "2026-05-04T07:00:00Z", calls: ["2026-05-04T16:50:00Z"])
        #expect(planner.due([overdue], now: Self.utc("2026-05-04T17:00:00Z"), free: 4).isEmpty)
        #expect(planner.nextLook([overdue], after: Self.utc("2026-05-04T17:00:00Z")) == Self.utc("2026-05-05T06:00:00Z"))
        // A campaign started at night waits for the morning.
        #expect(planner.nextCall(for: campaign(started: "2026-05-04T20:00:00Z")) == Self.utc("2026-05-05T06:00:00Z"))
        // The interval pushes the last call of the evening to the next morning.
        #expect(planner.nextCall(for: campaign(started: "2026-05-04T07:00:00Z", calls: ["2026-05-04T16:58:00Z"])) == Self.utc("2026-05-05T06:00:00Z"))
    }

    @Test func theDaysMostMovesToTheNextDay() {
        var rules = AutodialRules.defaults
        rules.maxCallsPerDay = 3
        let planner = CallPlanner(rules: rules)
        let two = campaign(started: "2026-05-04T06:00:00Z", calls: ["2026-05-04T06:00:00Z", "2026-05-04T06:05:00Z"])
        #expect(planner.nextCall(for: two) == Self.utc("2026-05-04T06:10:00Z"))
        // Yesterday's calls do not count today.
        let three = campaign(started: "2026-05-03T06:00:00Z", calls: ["2026-05-03T16:00:00Z", "2026-05-04T06:00:00Z", "2026-05-04T06:05:00Z", "2026-05-04T06:10:00Z"])
        #expect(planner.nextCall(for: three) == Self.utc("2026-05-05T06:00:00Z"))
        // The store's check uses the same day: it starts at the city's midnight.
        let claim = planner.claim(three.campaign, now: Self.utc("2026-05-04T12:00:00Z"))
        #expect(claim.dayStart == Self.utc("2026-05-03T21:00:00Z"))
        #expect(claim.lastCallBy == Self.utc("2026-05-04T11:55:00Z"))
        #expect(claim.maxPerDay == 3 && claim.channels == rules.channels)
    }

    @Test func aBacklogIsServedMostOverdueFirstUpToTheChannels() {
        let now = Self.utc("2026-05-04T09:00:00Z")
        // Every number last called in the hour before, each at its own second, in shuffled order.
        let backlog = (1...100).shuffled().map { i in
            DialerCampaign(
                campaign: Campaign(id: Int64(i), number: "38050\(1_000_000 + i)", startedAt: Self.utc("2026-05-04T06:00:00Z"), startedBy: .system),
                recentCalls: [Self.utc("2026-05-04T08:00:00Z").addingTimeInterval(Double(i * 30))])
        }
        let due = planner.due(backlog, now: now, free: 4)
        #expect(due.count == 4)
        let next = due.map { planner.nextCall(for: $0)! }
        #expect(next == next.sorted())
        #expect(due.map(\.campaign.id) == [1, 2, 3, 4])
        let others = backlog.filter { b in !due.contains(b) }.compactMap { planner.nextCall(for: $0) }.filter { $0 <= now }
        #expect(others.allSatisfy { $0 >= next.last! })
        #expect(planner.due(backlog, now: now, free: 0).isEmpty)
    }

    @Test func rulesFileNamesEveryBadField() throws {
        let good = try AutodialRules(json: Data("""
            {"time_zone": "Europe/Kyiv", "interval_minutes": 10, "hours": {"every_day": ["09:00", "20:00"], "sunday": null, "saturday": ["10:00", "24:00"]},
             "max_calls_per_number_per_day": 50, "max_concurrent_calls": 2, "message": {"uk": "Увага", "en": "Attention"}}
            """.utf8))
        #expect(good.interval == 600 && good.channels == 2 && good.maxCallsPerDay == 50)
        #expect(good.hours[1] == nil && good.hours[7] == DailyHours(from: 600, to: 1_440) && good.hours[2] == DailyHours(from: 540, to: 1_200))
        #expect(good.messages.map(\.language) == ["uk", "en"])
        let bad = #expect(throws: ValidationErrors.self) {
            try AutodialRules(json: Data("""
                {"time_zone": "Mars/Olympus", "interval_minutes": 0, "hours": {"funday": ["09:00", "20:00"], "monday": ["20:00", "09:00"]},
                 "max_concurrent_calls": 0, "message": {}}
                """.utf8))
        }
        // A number is not called again while its last call may still ring or play.
        let overlapping = #expect(throws: ValidationErrors.self) {
            try AutodialRules(json: Data(#"{"interval_minutes": 1, "ring_seconds": 30, "max_message_seconds": 60}"#.utf8))
        }
        #expect(overlapping?.issues.map(\.field) == ["interval_minutes"])
        let fields = Set(bad?.issues.map(\.field) ?? [])
        #expect(fields == ["time_zone", "interval_minutes", "hours.funday", "hours.monday", "max_concurrent_calls", "message"])
    }
}
