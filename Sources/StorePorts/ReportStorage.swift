import Foundation
import Geometry
import ReportModel

/// Where reports, their history, phones, photos' rows, notifications and the numbered
/// changes are kept: what the report service reads and writes, in four parts. A store is
/// all four (``ReportStorage``).
public typealias ReportStorage = ReportReads & ReportWrites & ChangeLog & ReportImports & AutodialReads & AssignmentReads

/// How a store hands out one map marker: the report's id, position, status (its number in
/// ``ReportReads/reference``'s statuses) and creation time in milliseconds. The service
/// makes its index entries this way, without an array of the store's own in between.
public typealias MarkerMaker<Marker> = (_ id: Int64, _ coordinate: Coordinate, _ status: Int, _ createdAt: Int64) -> Marker

/// What a store answers about reports.
///
/// Requirements every store meets (the conformance suite checks them against a
/// brute-force model of the same rows):
/// - **Boxes are exact**: a report is in a box when its coordinate is, edges included; a
///   box across the antimeridian holds both of its sides.
/// - **Public means public**: every read here but ``hidden(ids:)``, ``hidden(id:)``,
///   ``filer(of:)``, ``filers(of:)`` and the history sees only the public reports (not
///   hidden, not deleted).
/// - **Search** finds a report by a fragment of one of its phones' digits (any run of at
///   least one digit) or by its id; the exact id comes first, then the newest first.
/// - **Pages** are in id order after their cursor, and a page's reports are the ones a
///   brute-force filter of the rows would give.
///
/// Its methods may do their work in place on the calling thread (the SQLite store does): a
/// caller that must keep Swift's cooperative threads free calls them inside `Blocking.offPool`.
public protocol ReportReads: Sendable {
    /// The vocabularies reports are checked against, as this store keeps them.
    var reference: ReferenceData { get }
    /// Figures the store gives of itself for `GET /metrics`, by metric name (SQLite: the
    /// bytes of its heap).
    var gauges: [String: Int] { get }

    /// Every public report's map marker and tally marker, with the last change they
    /// include, all as of one point of the changes: what an index starts from.
    func snapshot<Marker>(_ make: MarkerMaker<Marker>) async throws -> (markers: [Marker], tally: [TallyMarker], lastChange: Int64)

    // MARK: Reports

    func report(id: Int64) async throws -> Report?
    /// The public reports with these ids, in the order given; others are left out.
    func reports(ids: some Collection<Int64>) async throws -> [Report]
    /// How many public reports the box holds.
    func count(in box: BoundingBox) async throws -> Int
    /// Up to `limit` public reports in the box, in id order after `after`.
    func page(in box: BoundingBox, after: Int64?, limit: Int) async throws -> [Report]
    /// Up to `limit` public reports matching the filter, in id order after `after`.
    func reports(matching filter: ReportFilter, after: Int64, limit: Int) async throws -> [Report]
    /// The same, for a whole-table export: the store may read its rows in another order
    /// of work, never in another order of answer.
    func scan(matching filter: ReportFilter, after: Int64, limit: Int) async throws -> [Report]
    /// The ids of the public reports in the box, ascending; nil when there are more than `cap`.
    func ids(in box: BoundingBox, cap: Int) async throws -> [Int64]?
    /// The public reports among `ids` that match the filter, in id order.
    func reports(among ids: some Collection<Int64>, matching filter: ReportFilter) async throws -> [Report]
    /// How many of the public reports with these ids match the filter.
    func count(matching filter: ReportFilter, ids: [Int64]) async throws -> Int
    /// Up to `limit` public reports whose phones or id match `text`: the exact id first,
    /// then the newest.
    func search(_ text: String, limit: Int) async throws -> [Report]
    /// How many public reports ``search(_:limit:)`` would find without a limit.
    func searchCount(_ text: String) async throws -> Int
    /// The same, counting no further than `cap + 1`: a number above `cap` says "more".
    func searchCount(_ text: String, cap: Int) async throws -> Int
    /// Both at once, which a store may find in one pass over the matches.
    func searchWithCount(_ text: String, limit: Int) async throws -> (reports: [Report], matched: Int)
    /// The first and last creation times of the public reports, nil without any.
    func createdRange() async throws -> ClosedRange<Date>?
    /// Counts of the table and its indexes (`posterwatch stats`).
    func statistics() async throws -> StoreStatistics

    // MARK: Hidden reports, filers and history (staff's)

    func hidden(id: Int64) async throws -> HiddenReport?
    /// Those of these reports that are hidden, by id.
    func hidden(ids: some Collection<Int64>) async throws -> [Int64: HiddenReport]
    /// The account that filed report `id`, when a person did.
    func filer(of id: Int64) async throws -> Int64?
    /// The accounts that filed these reports, by report id.
    func filers(of ids: some Collection<Int64>) async throws -> [Int64: Int64]
    /// A page of the public reports an account filed, newest first, before the cursor.
    func reports(filedBy account: Int64, before: Int64?, limit: Int) async throws -> [Report]
    /// A page of a report's history, oldest first, after the row numbered `after` (0: from
    /// the start); it outlives the report.
    func history(of id: Int64, after: Int64, limit: Int) async throws -> [HistoryEntry]
    /// History rows by their numbers (those that exist).
    func history(seqs: [Int64]) async throws -> [Int64: HistoryEntry]

    // MARK: Phones

    func phoneRecord(_ number: String) async throws -> PhoneRecord?
    /// Phone history rows by their numbers (those that exist).
    func phoneHistory(seqs: some Collection<Int64>) async throws -> [Int64: PhoneHistoryEntry]
    /// The statuses of those of these numbers that have one (the others are unverified).
    func phoneStatuses(_ numbers: some Collection<String>) async throws -> [String: PhoneStatus]
    /// A page of the public reports carrying a number, in id order after `after`, and how many carry it.
    func reports(carrying number: String, after: Int64, limit: Int) async throws -> (reports: [Report], matched: Int)
    /// The reports that carry a number, newest first, with their holders.
    func holders(of phone: String, limit: Int) async throws -> [PhoneHolder]
    func blockedCount() async throws -> Int
    /// Every blocked number, in the order blocked.
    func blocklist() async throws -> [BlockedPhone]
    /// The numbers blocked and unblocked after change `since`.
    func blocklistChanges(since: Int64) async throws -> BlocklistChanges

    /// The answer stored with a caller's idempotency key, if any.
    func storedAnswer(caller: String, key: String) async throws -> StoredAnswer?

    // MARK: Photos' rows and notifications

    /// A report's photos, oldest first.
    func photos(of id: Int64) async throws -> [PhotoRow]
    /// The photos of these reports, each report's oldest first (those without: absent).
    func photos(of ids: [Int64]) async throws -> [Int64: [PhotoRow]]
    /// Whether a stored picture belongs to some report (`publicOnly`: to a public one).
    func photoExists(sha256: String, publicOnly: Bool) async throws -> Bool
    /// The digests of every photo row (what the files must hold).
    func photoNames() async throws -> Set<String>
    /// A page of an account's notifications, newest first before `before`, and how many are unread.
    func notifications(of account: Int64, before: Int64?, limit: Int, unreadOnly: Bool) async throws -> (notifications: [StatusNotification], unread: Int)
}

extension ReportWrites {
    /// ``commitNumbered(_:)``'s outcomes alone.
    public func commit<T>(_ writes: [(any ReportTransaction) throws -> T]) -> [Result<T, any Error>] {
        commitNumbered(writes).outcomes
    }
}

extension ReportReads {
    public func searchWithCount(_ text: String, limit: Int) async throws -> (reports: [Report], matched: Int) {
        (try await search(text, limit: limit), try await searchCount(text))
    }
}

/// What one transaction of ``ReportWrites/commitNumbered(_:)`` did.
public struct Committed<T> {
    /// Each write's outcome, in order.
    public var outcomes: [Result<T, any Error>]
    /// The change numbers it gave out; nil when it gave out none or did not commit.
    public var numbers: ChangeNumbers?

    public init(outcomes: [Result<T, any Error>], numbers: ChangeNumbers?) { (self.outcomes, self.numbers) = (outcomes, numbers) }
}

/// The change numbers one committed transaction gave out: every number after `after`,
/// through `through`, is its own (another writer's are before or after them all), and every
/// change numbered through `after` had been committed before it. With them a process that
/// follows the change log knows which of the changes it would read are its own writes.
public struct ChangeNumbers: Sendable, Hashable {
    public var after: Int64
    public var through: Int64

    public init(after: Int64, through: Int64) { (self.after, self.through) = (after, through) }
}

/// How a store takes writes.
///
/// Requirements every store meets (the conformance suite checks them):
/// - **All or nothing**: the writes given to one ``commit(_:)`` are one transaction; a
///   write that throws leaves no row behind, and the others still commit.
/// - **Every write is seen**: each step of a ``ReportTransaction`` that changes a report
///   or a phone writes its history row and its numbered change with it.
/// - **Idempotency answers** are stored with the write they answer, and read back by the
///   same caller and key only.
/// - **A transaction's change numbers are its own**: those it gave out run from just
///   after the last one committed before it (``ChangeNumbers``).
public protocol ReportWrites: Sendable {
    /// Runs the writes in one transaction, each given the transaction's steps, and returns
    /// each one's outcome in order (see the requirements), and the change numbers the
    /// transaction gave out.
    ///
    /// It is synchronous, and so are the steps: the service's group commit calls it from
    /// its one writer thread, which holds the transaction for the steps' length. A
    /// networked store waits on its connection there, never on Swift's cooperative threads.
    func commitNumbered<T>(_ writes: [(any ReportTransaction) throws -> T]) -> Committed<T>

    /// Forgets idempotency keys stored before `cutoff`; returns how many.
    func forgetIdempotencyKeys(before cutoff: Date) async throws -> Int
    /// Forgets the changes made before `cutoff`, the oldest ones (what is kept is always
    /// every change after a number); returns how many.
    func forgetChanges(before cutoff: Date) async throws -> Int
    /// Finishes what the store left for later before the process stops (SQLite folds its
    /// write-ahead log into the file); false when some of it must wait for the next open.
    func shutDown() async throws -> Bool
}

/// The steps of one write transaction: each reads what the transaction has written so
/// far, and each change of a report or a phone writes its history and change rows.
public protocol ReportTransaction {
    var reference: ReferenceData { get }

    /// The reports whose rows this transaction's steps wrote since the last call (every
    /// change it numbered names one): what a cache of rows drops once it commits.
    func takeReportsWritten() -> [Int64]

    // MARK: Reports

    /// Stores a new report (numbered by the store), its history and its change.
    func insert(_ draft: ReportDraft, filer: Int64?, author: Author, now: Date) throws -> Report
    /// A public report, or nil.
    func report(_ id: Int64) throws -> Report?
    func hidden(_ id: Int64) throws -> HiddenReport?
    func filer(of id: Int64) throws -> Int64?
    /// Replaces the fields of a public report but its status and creation time;
    /// ``ReportNotFound`` for another id.
    func edit(_ id: Int64, to draft: ReportDraft, author: Author, now: Date) throws -> (before: Report, after: Report)
    /// Moves a public report to a status (the workflow was checked by the caller).
    func setStatus(_ id: Int64, to status: String, note: String?, author: Author, now: Date) throws -> (before: Report, after: Report)
    /// Takes a public report out of the public answers; it is kept for staff.
    func hide(_ id: Int64, note: String, author: Author, now: Date) throws -> Report
    /// Brings a hidden report back.
    func unhide(_ id: Int64, note: String?, author: Author, now: Date) throws -> Report
    /// Deletes a public report (its history stays).
    func delete(_ id: Int64, author: Author, now: Date) throws -> Report

    // MARK: Idempotency

    func storedAnswer(caller: String, key: String) throws -> StoredAnswer?
    func store(_ answer: StoredAnswer, caller: String, key: String, now: Date) throws

    // MARK: Phones

    func phoneStatus(_ number: String) throws -> PhoneStatus
    /// Whether any report, public or hidden, carries the number, or it has a record.
    func knows(phone number: String) throws -> Bool
    /// Sets a number's status, with its history row and its change; `moved` counts the
    /// reports the change moved.
    @discardableResult
    func setPhoneStatus(_ number: String, to status: PhoneStatus, action: PhoneAction, note: String?, moved: Int, author: Author, now: Date) throws -> PhoneHistoryEntry
    /// The public reports in `status` that carry the number.
    func reports(carrying number: String, status: String) throws -> [Report]
    /// Which of these numbers are blocked now.
    func blockedNumbers(among numbers: some Collection<String>) throws -> Set<String>
    /// Moves a report to `status` as the consequence of a phone's change.
    func moveForPhone(_ report: Report, to status: String, note: String, author: Author, now: Date) throws -> (after: Report, historySeq: Int64)
    /// Remembers that a block moved these reports (by their steps' history rows).
    func rememberBlockMoves(_ moves: [(reportID: Int64, historySeq: Int64)]) throws
    /// Of these reports, those whose last step is still the one a block made.
    func movedByBlock(_ ids: [Int64]) throws -> Set<Int64>
    func forgetBlockMoves(_ ids: [Int64]) throws

    // MARK: Autodial

    /// The number's running campaign, if any.
    func activeCampaign(_ number: String) throws -> Campaign?
    /// Starts a campaign on a number (the caller checked it may), with the phone's history
    /// row and change (`autodial_started`; its status stays).
    func startCampaign(_ number: String, note: String?, author: Author, now: Date) throws -> (campaign: Campaign, entry: PhoneHistoryEntry)
    /// Ends a running campaign, with the phone's history row (the note, or the reason's
    /// explanation) and change (`autodial_stopped`).
    func endCampaign(_ campaign: Campaign, reason: CampaignEnd, note: String?, author: Author, now: Date) throws -> (campaign: Campaign, entry: PhoneHistoryEntry)
    /// How many public reports carry the number in a status other than these.
    func openReportCount(carrying number: String, excluding statuses: [String]) throws -> Int
    /// Writes a call's row before it is dialled, when the claim's checks all pass against
    /// every call any process wrote (see ``CallClaim``); otherwise the first that failed.
    func claimCall(_ claim: CallClaim) throws -> Result<CallAttempt, ClaimRefusal>
    /// Writes how a call ended (also on one already marked interrupted: the truth wins).
    func finishCall(_ id: Int64, _ result: CallResult) throws -> CallAttempt?
    /// Marks `interrupted` the calls whose dialer never finished them within their lease.
    func expireCalls(now: Date) throws -> Int

    // MARK: Assignments

    /// The report's active assignment (public or hidden report), if any.
    func activeAssignment(of reportID: Int64) throws -> Assignment?
    /// An account's active assignments, in its order.
    func assignments(of account: Int64) throws -> [Assignment]
    /// Assigns a report to an account, last in its order (the caller checked it may), with
    /// the report's history row (`assigned`, the assignee before and after as the field
    /// change `assignee`) and change; `previous`, the active assignment, ends with it.
    func assign(_ reportID: Int64, to account: Int64, replacing previous: Assignment?, note: String?, author: Author, now: Date) throws -> Assignment
    /// Ends an active assignment, with the report's history row (`unassigned`) and change.
    func endAssignment(_ assignment: Assignment, note: String?, author: Author, now: Date) throws -> Assignment
    /// Puts these assignments (by id) in this order, first to last.
    func reorderAssignments(_ ids: [Int64]) throws

    // MARK: Photos' rows and notifications

    /// Adds a stored picture to a report (public or hidden); the same picture twice is the
    /// first row again, and no change. ``PhotoLimitReached`` past ``PhotoRow/maxPerReport``.
    func addPhoto(to id: Int64, sha256: String, width: Int, height: Int, bytes: Int, author: Author, now: Date) throws -> (photo: PhotoRow, added: Bool)
    /// ``PhotoLimitReached`` when the report has as many photos as it may.
    func ensurePhotoRoom(on id: Int64) throws
    /// ``PhotoNotFound`` for a photo the report does not have.
    func removePhoto(_ photoID: Int64, of id: Int64, now: Date) throws -> PhotoRow
    /// Marks an account's notifications read up to change `seq`.
    func markNotificationsRead(of account: Int64, upTo seq: Int64) throws -> (readUpTo: Int64, unread: Int)

    // MARK: Following

    /// Up to `limit` changes after `seq`, as this transaction sees them.
    func changes(after seq: Int64, limit: Int) throws -> [ChangeRow]
    /// Changes up to this number have been forgotten (0: none).
    func prunedThrough() throws -> Int64
    /// The map markers of those of these reports that are public.
    func markers<Marker>(ids: some Collection<Int64>, _ make: MarkerMaker<Marker>) throws -> [Marker]
    /// The tally markers of those of these reports that are public.
    func tallyMarkers(ids: some Collection<Int64>) throws -> [TallyMarker]
}

/// Who checks which report, as the assignees and the supervisors read it.
public protocol AssignmentReads: Sendable {
    /// An account's active assignments of public reports, in its order.
    func assignments(of account: Int64) async throws -> [Assignment]
    /// A report's assignments, newest first: the newest ``Assignment/maxOfReport`` (an
    /// inspector may take and give back a report again and again).
    func assignments(ofReport id: Int64) async throws -> [Assignment]
    /// The active assignee of each of these reports that has one.
    func assignees(of ids: some Collection<Int64>) async throws -> [Int64: Int64]
    /// The reports (public or hidden) that someone is assigned to now, ascending.
    func assignedReports() async throws -> [Int64]
}

/// Autodial's campaigns and call log, as the dialer, the supervisors and the statistics read them.
public protocol AutodialReads: Sendable {
    /// A number's campaigns, newest first.
    func campaigns(of number: String) async throws -> [Campaign]
    /// The running campaigns, each with its number's calls placed since `callsSince`.
    func activeCampaigns(callsSince: Date) async throws -> [DialerCampaign]
    /// A page of a number's calls, newest first, before the cursor (a call id).
    func calls(of number: String, before: Int64?, limit: Int) async throws -> [CallAttempt]
    /// A page of campaigns, newest first before the cursor, with what each did by `now`.
    func campaignEffects(now: Date, before: Int64?, limit: Int) async throws -> [CampaignEffect]
}

/// The numbered changes: every write of a report or a phone, by any process.
///
/// **The contract** (the feed's cursors, the following of other processes, the change
/// stream and the webhook outbox all rest on it): changes are numbered in commit order.
/// A reader that has seen change N never later finds a change numbered below N that it
/// did not see; the last number never goes back (not even when old changes are
/// forgotten). `ChangeLogTests` prove it with concurrent writers and followers; the
/// conformance suite checks it on every store.
public protocol ChangeLog: Sendable {
    /// Up to `limit` changes after `seq`, oldest first, with the last number and the
    /// retention mark as of the same read.
    func changes(after seq: Int64, limit: Int) async throws -> ChangeRows
    /// The same page with the current public row of each report the changes name, read
    /// as of the same point.
    func changesWithReports(after seq: Int64, limit: Int) async throws -> (changes: ChangeRows, reports: [Int64: Report])
    /// The changes of these numbers that are still kept, in order.
    func changes(seqs: some Collection<Int64>) async throws -> [ChangeRow]
    /// The highest number handed out so far (0 before the first write).
    func lastChange() async throws -> Int64
    /// The name this log was given when its database was made, never another's: a change
    /// number means the same writes in this log and in every copy of it (a backup), and
    /// nothing in another log. What a saved index is matched against, beside the number
    /// (a restore moves the saved index aside: the restored log's numbers go on from the
    /// backup's). A database without one is ``ChangeLogUnnamed``.
    func changeLogName() async throws -> String
    /// Waits until a change numbered above `seq` is committed, by any process, or until
    /// `timeout` has passed, and returns the last number then. A store that is told of
    /// commits (PostgreSQL's LISTEN) returns at once; one that is not looks again at short
    /// intervals (the SQLite store: every 50 ms).
    func nextChange(after seq: Int64, timeout: Duration) async throws -> Int64
}

/// The database's change log has no name (``ChangeLog/changeLogName()``): its row was
/// removed by hand. Nothing saved from it can be matched to it.
public struct ChangeLogUnnamed: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "the database's change log has no name (the row of change_log_name is missing)" }
}
