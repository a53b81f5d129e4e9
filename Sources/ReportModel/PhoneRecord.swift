import Foundation
import Geometry

/// What a phone's change did, as its history keeps it.
public enum PhoneAction: String, Sendable, Hashable, Codable, CaseIterable {
    case verified, blocked, unblocked
    /// An autodial campaign started or ended on the number (its status stays).
    case autodialStarted = "autodial_started", autodialStopped = "autodial_stopped"

    /// Whether the action sets the number's status (an autodial campaign's start or end
    /// leaves it, and its time of change, as they were).
    public var setsStatus: Bool { self != .autodialStarted && self != .autodialStopped }

    /// The change row's action.
    public var change: ReportAction {
        switch self {
        case .verified: .phoneVerified
        case .blocked: .phoneBlocked
        case .unblocked: .phoneUnblocked
        case .autodialStarted: .phoneAutodialStarted
        case .autodialStopped: .phoneAutodialStopped
        }
    }
}

/// One change of a phone's status.
public struct PhoneHistoryEntry: Sendable, Hashable {
    public var seq: Int64
    public var number: String
    public var at: Date
    public var author: Author
    public var action: PhoneAction
    public var fromStatus: PhoneStatus
    public var toStatus: PhoneStatus
    public var note: String?
    /// How many reports the change moved (a block to `phone_blocked`, an unblock back).
    public var moved: Int

    public init(seq: Int64, number: String, at: Date, author: Author, action: PhoneAction, fromStatus: PhoneStatus, toStatus: PhoneStatus, note: String? = nil, moved: Int) {
        self.seq = seq
        self.number = number
        self.at = at
        self.author = author
        self.action = action
        self.fromStatus = fromStatus
        self.toStatus = toStatus
        self.note = note
        self.moved = moved
    }
}

/// A number's record: its status, and its reports now (public ones: a hidden report counts
/// nowhere, as it shows nowhere).
public struct PhoneRecord: Sendable, Hashable {
    public var number: String
    public var status: PhoneStatus
    /// When the status last changed (nil while the number was never verified).
    public var changedAt: Date?
    /// Since when it is blocked (nil unless it is).
    public var blockedAt: Date?
    public var reportCount: Int
    public var openCount: Int
    /// Its reports per status code.
    public var statusCounts: [String: Int]
    /// The creation times of its first and its last report (nil without reports).
    public var firstSeen: Date?
    public var lastSeen: Date?
    /// Its reports per district code, most first.
    public var districts: [(code: String, count: Int)]
    /// The violator names written on its reports, most used first (at most ``maxViolators``).
    public var violators: [(name: String, count: Int)]
    /// The changes of its status, oldest first: the newest ``maxHistory`` (each is a
    /// supervisor's step, but nothing else bounds them).
    public var history: [PhoneHistoryEntry]

    public static let maxViolators = 20
    public static let maxHistory = 1_000

    public static func == (a: Self, b: Self) -> Bool {
        a.number == b.number && a.status == b.status && a.changedAt == b.changedAt && a.blockedAt == b.blockedAt && a.reportCount == b.reportCount
            && a.openCount == b.openCount && a.statusCounts == b.statusCounts && a.firstSeen == b.firstSeen && a.lastSeen == b.lastSeen
            && a.districts.elementsEqual(b.districts, by: { $0 == $1 }) && a.violators.elementsEqual(b.violators, by: { $0 == $1 })
            && a.history == b.history
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(number) }

    public init(number: String, status: PhoneStatus, changedAt: Date? = nil, blockedAt: Date? = nil, reportCount: Int, openCount: Int, statusCounts: [String: Int], firstSeen: Date? = nil, lastSeen: Date? = nil, districts: [(code: String, count: Int)], violators: [(name: String, count: Int)], history: [PhoneHistoryEntry]) {
        self.number = number
        self.status = status
        self.changedAt = changedAt
        self.blockedAt = blockedAt
        self.reportCount = reportCount
        self.openCount = openCount
        self.statusCounts = statusCounts
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.districts = districts
        self.violators = violators
        self.history = history
    }
}

extension PhoneRecord {
    /// One public report carrying the number, as its record counts it.
    public struct Sighting: Sendable {
        public var status: String, district: String, violator: String?, createdAt: Int64
        public init(status: String, district: String, violator: String?, createdAt: Int64) {
            (self.status, self.district, self.violator, self.createdAt) = (status, district, violator, createdAt)
        }
    }

    /// A number's record from what a store read of it: its status row, if any (status,
    /// changed, blocked), the public reports carrying it, and its history. Nil when no
    /// report carries it and nobody ever changed its status.
    public init?(
        number: String, stored: (status: PhoneStatus, changedAt: Date, blockedAt: Date?)?, sightings: [Sighting],
        reference: ReferenceData, history: [PhoneHistoryEntry]
    ) {
        guard stored != nil || !sightings.isEmpty else { return nil }
        var statuses: [String: Int] = [:], districts: [String: Int] = [:], violators: [String: Int] = [:]
        for r in sightings {
            statuses[r.status, default: 0] += 1
            districts[r.district, default: 0] += 1
            if let name = r.violator { violators[name, default: 0] += 1 }
        }
        func ranked(_ counts: [String: Int]) -> [(String, Int)] {
            counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { ($0.key, $0.value) }
        }
        let times = sightings.map(\.createdAt)
        self.init(
            number: number, status: stored?.status ?? .unverified, changedAt: stored?.changedAt, blockedAt: stored?.blockedAt,
            reportCount: sightings.count, openCount: statuses.reduce(0) { $0 + (reference.isOpen($1.key) ? $1.value : 0) },
            statusCounts: statuses, firstSeen: times.min().map(Date.init(milliseconds:)), lastSeen: times.max().map(Date.init(milliseconds:)),
            districts: ranked(districts).map { (code: $0.0, count: $0.1) },
            violators: ranked(violators).prefix(Self.maxViolators).map { (name: $0.0, count: $0.1) },
            history: history)
    }
}

/// A number on the blocklist.
public struct BlockedPhone: Sendable, Hashable {
    public var number: String
    public var blockedAt: Date
    /// Its public reports now.
    public var reportCount: Int

    public init(number: String, blockedAt: Date, reportCount: Int) {
        self.number = number
        self.blockedAt = blockedAt
        self.reportCount = reportCount
    }
}

/// What changed on the blocklist after a sequence number: each number's last change.
public struct BlocklistChanges: Sendable, Hashable {
    /// Numbers blocked since (and blocked now), with their blocking.
    public var added: [BlockedPhone]
    /// Numbers unblocked since (and not blocked now).
    public var removed: [String]
    /// The highest change sequence number as of the read: the next `since`.
    public var lastSeq: Int64
    /// Changes up to this number are forgotten (retention).
    public var prunedThrough: Int64

    public init(added: [BlockedPhone], removed: [String], lastSeq: Int64, prunedThrough: Int64) {
        self.added = added
        self.removed = removed
        self.lastSeq = lastSeq
        self.prunedThrough = prunedThrough
    }
}

/// A report that carries a phone number: where it is and its status.
public struct PhoneHolder: Sendable, Hashable {
    public var reportID: Int64
    public var coordinate: Coordinate
    public var status: String

    public init(reportID: Int64, coordinate: Coordinate, status: String) {
        self.reportID = reportID
        self.coordinate = coordinate
        self.status = status
    }
}
