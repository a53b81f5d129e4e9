import Clustering
import Crypto
import Foundation
import Geometry
import ReportModel
import StorePorts

/// What filing accepts and hints: the service area, and how near or alike an open report
/// must be to be hinted as a possible duplicate.
public struct IntakeSettings: Sendable, Hashable {
    /// Where reports may be filed.
    public var area: BoundingBox
    /// Open reports within this many metres are hinted.
    public var duplicateRadius: Double = 50
    /// At most this many hints.
    public var maxHints = 5
    /// How long an idempotency key's first answer is kept.
    public var idempotencyKeyLifetime: TimeInterval = 48 * 3600

    public init(area: BoundingBox, duplicateRadius: Double = 50) {
        self.area = area
        self.duplicateRadius = duplicateRadius
    }

    /// The default area: the box of the districts' centres with a margin of 0.25° (about
    /// 28 km north–south, 18 km east–west in Kyiv).
    public init(reference: ReferenceData, margin: Double = 0.25) {
        let lons = reference.districts.map { $0.center[0] }, lats = reference.districts.map { $0.center[1] }
        let box = try? BoundingBox(
            west: max(-180, (lons.min() ?? -180) - margin), south: max(-90, (lats.min() ?? -90) - margin),
            east: min(180, (lons.max() ?? 180) + margin), north: min(90, (lats.max() ?? 90) + margin))
        self.init(area: box ?? .world)
    }

    /// The rule a position breaks, if it lies outside the area.
    public func check(_ c: Coordinate, field: String) -> ValidationError? {
        area.contains(c) ? nil : ValidationError(field: field, "lies outside the service area \(area.west),\(area.south),\(area.east),\(area.north)")
    }
}

/// An open report that a new one may repeat: near it, or sharing a phone number.
public struct DuplicateHint: Sendable, Hashable, Codable {
    public var id: Int64
    /// Metres from the new report, rounded to a tenth.
    public var distanceM: Double
    /// The phone numbers the two share.
    public var sharedPhones: [String]

    public init(id: Int64, distanceM: Double, sharedPhones: [String]) {
        self.id = id
        self.distanceM = distanceM
        self.sharedPhones = sharedPhones
    }

    enum CodingKeys: String, CodingKey {
        case id
        case distanceM = "distance_m"
        case sharedPhones = "shared_phones"
    }
}

extension ReportService {
    /// How many of a phone's newest reports are weighed as hints (a number on thousands
    /// of posters is hinted by its latest ones, not all).
    static let phoneHolderLimit = 50

    /// Open reports within the duplicate radius (or `radius`) of `c`, or sharing one of
    /// `phones`, nearest first, at most ``IntakeSettings/maxHints``.
    public func duplicateHints(near c: Coordinate, phones: [String], radius: Double? = nil) async throws -> [DuplicateHint] {
        let radius = radius ?? intake.duplicateRadius
        var hints: [Int64: DuplicateHint] = [:]
        func hint(_ id: Int64, at position: Coordinate) -> DuplicateHint {
            hints[id] ?? DuplicateHint(id: id, distanceM: (position.distance(to: c) * 10).rounded() / 10, sharedPhones: [])
        }
        // The nearest open reports from the index in memory (its per-status counts skip
        // dense spots of closed reports), the holders of each phone from `report_phone`.
        let open = ClusterFilter(statusNumbers: try statusNumbers(reference.statuses.filter(\.open).map(\.code)))
        // None until the index is built (a start in the background): the phones still hint.
        for member in indexReady ? index.nearest(to: c, within: radius, filter: open, limit: intake.maxHints) : [] {
            let position = Coordinate(longitude: WebMercator.longitude(x: member.x), latitude: WebMercator.latitude(y: member.y))
            if position.distance(to: c) <= radius { hints[member.id] = hint(member.id, at: position) }
        }
        for phone in phones {
            for holder in try await read({ try await $0.holders(of: phone, limit: Self.phoneHolderLimit) }) where reference.isOpen(holder.status) {
                var h = hint(holder.reportID, at: holder.coordinate)
                h.sharedPhones.append(Phone.written(phone))
                hints[holder.reportID] = h
            }
        }
        return hints.values.sorted { ($0.distanceM, $0.id) < ($1.distanceM, $1.id) }.prefix(intake.maxHints).map { $0 }
    }

    // MARK: Idempotency keys

    /// Files a draft once per idempotency key (IETF httpapi-idempotency-key-header): the
    /// first request's answer (made by `answer` inside the filing's transaction) is
    /// stored with its key; the same key again with the same body replays it
    /// (``IdempotentOutcome/replayed(_:)``); with another body it is
    /// ``IdempotencyKeyReused``; while the first is still running in this process,
    /// ``IdempotencyKeyInFlight``. One running in another replica commits first (the
    /// writers' lock orders them), and this one replays its answer.
    public func file(
        _ draft: ReportDraft, by caller: Caller, key: String, body: some DataProtocol, now: Date = Date(),
        answer: @escaping @Sendable (Filing) throws -> StoredAnswer.Reply
    ) async throws -> IdempotentOutcome {
        let fingerprint = Data(SHA256.hash(data: Data(body)))
        let slot = caller.scope + " " + key
        guard keysInFlight.withLock({ $0.insert(slot).inserted }) else { throw IdempotencyKeyInFlight() }
        defer { _ = keysInFlight.withLock { $0.remove(slot) } }
        if let stored = try await read({ try await $0.storedAnswer(caller: caller.scope, key: key) }) {
            guard stored.fingerprint == fingerprint else { throw IdempotencyKeyReused() }
            return .replayed(stored.reply)
        }
        let draft = draft.filed
        let hints = try await duplicateHints(near: draft.coordinate, phones: draft.phones)
        return try await commits.perform { [self] t in
            // Again under the writers' lock: another replica (or process) may have filed
            // with this key since the read above, and its answer is the one to give.
            if let stored = try t.storedAnswer(caller: caller.scope, key: key) {
                guard stored.fingerprint == fingerprint else { throw IdempotencyKeyReused() }
                return (.replayed(stored.reply), IndexEffect())
            }
            let report = try t.insert(draft, filer: caller.author.accountID, author: caller.author, now: now)
            let reply = try answer(Filing(report: report, possibleDuplicates: hints))
            try t.store(StoredAnswer(fingerprint: fingerprint, reply: reply), caller: caller.scope, key: key, now: now)
            return (.first(reply), effect(added: [report]))
        }
    }

    /// Forgets idempotency keys older than their lifetime; returns how many.
    @discardableResult
    public func forgetOldIdempotencyKeys(now: Date = Date()) async throws -> Int {
        let cutoff = now.addingTimeInterval(-intake.idempotencyKeyLifetime)
        return try await read { try await $0.forgetIdempotencyKeys(before: cutoff) }
    }
}

/// The answer to a filing with an idempotency key.
public enum IdempotentOutcome: Sendable {
    /// The key's first request: the answer just made (and stored).
    case first(StoredAnswer.Reply)
    /// A retry: the first request's answer, as stored.
    case replayed(StoredAnswer.Reply)
}

/// An idempotency key sent again with another body (HTTP 422).
public struct IdempotencyKeyReused: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String { "this Idempotency-Key was used with another body; a new request needs a new key" }
}

/// An idempotency key whose first request is still being answered (HTTP 409).
public struct IdempotencyKeyInFlight: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String { "a request with this Idempotency-Key is still being processed; retry when it has been answered" }
}
