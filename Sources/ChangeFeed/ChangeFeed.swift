import Foundation
import ReportModel
import Offloading
import StorePorts

/// One change as a reader may see it.
///
/// An entry carries the report as it is *now*, not as the change left it: a client that
/// applies entries in order (upsert the report, or drop it when the entry has none) ends
/// with the data as it is, and applying an entry twice changes nothing. For the public, a
/// report that is not public now (hidden or deleted) is a bare `{seq, type, id}` in every
/// entry that names it; staff see it with its hiding, and what each change did.
public struct ChangeEntry: Sendable {
    public var seq: Int64
    public var type: ChangeType
    public var reportID: Int64
    public var at: Date
    /// The report now; nil when the reader may not see it (or it is deleted).
    public var report: Report?
    /// Staff only: why and since when the report is hidden.
    public var hidden: HiddenReport?
    /// Staff only: the history row of the change (who, from and to, the note, the fields).
    public var history: HistoryEntry?
    /// Staff only: the account that filed the report, when a person did (whom a push
    /// gateway tells that their report moved).
    public var filerID: Int64?
    /// A phone's change: the number and its status now, and for staff the change itself.
    public var phone: PhoneState?

    /// A number as a phone's change shows it.
    public struct PhoneState: Sendable, Hashable {
        public var number: String
        public var status: PhoneStatus
        /// Staff only: who changed it, from what to what, the note, how many reports moved.
        public var change: PhoneHistoryEntry?
    }

    /// What the public sees of this entry as staff see it: the report only when it is
    /// public now, a hiding or a deletion bare whatever became of the report since, and
    /// nothing of who made the change. A phone's change is bare too: which numbers are
    /// blocked is the blocklist's, for integrations and staff.
    public var publicForm: ChangeEntry {
        let tombstone = type == .reportHidden || type == .reportDeleted
        return ChangeEntry(
            seq: seq, type: type, reportID: reportID, at: at, report: hidden == nil && !tombstone ? report : nil, hidden: nil, history: nil,
            filerID: nil, phone: nil)
    }
}

/// A page of the feed.
public struct ChangePage: Sendable {
    public var entries: [ChangeEntry]
    /// Where the next page starts (`since`): the last entry's number on a full page, else
    /// the highest number handed out when the page was read.
    public var lastSeq: Int64
}

/// A `since` the feed cannot continue from: older than what is kept, or past the last
/// change (a database restored from an older backup). The client must start again from
/// a snapshot.
public struct ChangesUnavailable: Error, Sendable, CustomStringConvertible {
    public var since: Int64
    public var prunedThrough: Int64
    public var lastSeq: Int64
    /// How to start again.
    public var restart = "download the data again (GET /v1/export, or /v1/reports pages) and follow /v1/changes?since= with its X-Last-Seq"

    public init(since: Int64, prunedThrough: Int64, lastSeq: Int64, restart: String? = nil) {
        (self.since, self.prunedThrough, self.lastSeq) = (since, prunedThrough, lastSeq)
        if let restart { self.restart = restart }
    }

    /// Throws unless changes after `since` can be read: it is neither older than what is
    /// kept nor past the last change.
    public static func check(since: Int64, prunedThrough: Int64, lastSeq: Int64, restart: String? = nil) throws(ChangesUnavailable) {
        guard (prunedThrough...max(lastSeq, prunedThrough)).contains(since) else {
            throw ChangesUnavailable(since: since, prunedThrough: prunedThrough, lastSeq: lastSeq, restart: restart)
        }
    }

    public var description: String {
        let why = since < prunedThrough
            ? "changes up to \(prunedThrough) are no longer kept"
            : "there is no change \(since) here, the last is \(lastSeq)"
        return "\(why): \(restart)"
    }
}

/// The changes feed over the store's numbered writes (its ``ChangeLog``).
///
/// Its reads enter `Blocking.offPool` themselves: a caller on the cooperative pool (the
/// change stream's reader, the webhook dispatcher) keeps it free.
public struct ChangeFeed: Sendable {
    let storage: any ReportReads & ChangeLog

    /// The most entries of one page.
    public static let maxPage = 1_000

    public init(storage: any ReportReads & ChangeLog) {
        self.storage = storage
    }

    /// The number of the last change, by any process.
    public func lastChange() async throws -> Int64 {
        try await Blocking.offPool { try await storage.lastChange() }
    }

    /// The change rows of these numbers that are still kept, in order.
    public func changes(seqs: [Int64]) async throws -> [ChangeRow] {
        try await Blocking.offPool { try await storage.changes(seqs: seqs) }
    }

    /// The changes after `since`, at most `limit`, as the public (`staff` false) or
    /// supervisors and administrators see them.
    public func page(since: Int64, limit: Int, staff: Bool) async throws -> ChangePage {
        try await Blocking.offPool {
            let (read, reports) = try await storage.changesWithReports(after: since, limit: limit)
            try ChangesUnavailable.check(since: since, prunedThrough: read.prunedThrough, lastSeq: read.lastSeq)
            let full = read.rows.count == limit
            return ChangePage(entries: try await entries(read.rows, staff: staff, reports: reports), lastSeq: full ? read.rows.last!.seq : read.lastSeq)
        }
    }

    /// The entries of these change rows as the public or staff see them; `reports`, when
    /// given, are the current rows of the public reports they name (read otherwise).
    public func entries(_ rows: [ChangeRow], staff: Bool, reports: [Int64: Report]? = nil) async throws -> [ChangeEntry] {
        try await Blocking.offPool { try await read(rows, staff: staff, reports: reports) }
    }

    private func read(_ rows: [ChangeRow], staff: Bool, reports: [Int64: Report]?) async throws -> [ChangeEntry] {
        let (phoneRows, reportRows) = (rows.filter(\.action.isPhone), rows.filter { !$0.action.isPhone })
        let ids = Set(reportRows.map(\.reportID))
        let reports = if let reports { reports } else {
            Dictionary(try await storage.reports(ids: ids).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        }
        let hidden = staff ? try await storage.hidden(ids: ids.subtracting(reports.keys)) : [:]
        let history = staff ? try await storage.history(seqs: reportRows.compactMap(\.historySeq)) : [:]
        let filers = staff ? try await storage.filers(of: ids) : [:]
        let phoneStatuses = try await storage.phoneStatuses(Set(phoneRows.compactMap(\.phone)))
        let phoneHistory = staff ? try await storage.phoneHistory(seqs: phoneRows.compactMap(\.historySeq)) : [:]
        return rows.map { row in
            let entry = if row.action.isPhone {
                ChangeEntry(
                    seq: row.seq, type: ChangeType(row.action), reportID: row.reportID, at: row.at,
                    phone: row.phone.map { ChangeEntry.PhoneState(number: $0, status: phoneStatuses[$0] ?? .unverified, change: row.historySeq.flatMap { phoneHistory[$0] }) })
            } else {
                ChangeEntry(
                    seq: row.seq, type: ChangeType(row.action), reportID: row.reportID, at: row.at,
                    report: reports[row.reportID] ?? hidden[row.reportID]?.report, hidden: hidden[row.reportID],
                    history: row.historySeq.flatMap { history[$0] }, filerID: filers[row.reportID])
            }
            return staff ? entry : entry.publicForm
        }
    }
}
