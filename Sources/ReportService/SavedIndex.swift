import Clustering
import Crypto
import FlatFiles
import Foundation
import Offloading
import Photos
import ReportModel
import StorePorts
import Tally

/// The cluster index and the tally saved beside the database, so that a server on ten
/// million reports answers within a second of its start instead of after the twenty it
/// takes to read the rows and build them.
///
/// A saved index is used only when it is exactly the database's state: saved at the
/// change log's last number, of this change log (its name, ``ChangeLog/changeLogName()``,
/// and while the log holds it, the same change at that number: its ``mark(of:at:)``),
/// for the same reference data, grid and record layout, and whole (each section's
/// checksum; the references a walk follows within their arrays). Anything else (an older number, another database, a file
/// cut short or damaged) is refused with its reason, and the index is built from the rows
/// in the background while the server serves what needs no index
/// (``ReportService/IndexStart``).
///
/// A start may allow it to be some changes behind (a replica of several on PostgreSQL,
/// whose others write while it restarts): it is then used only when the log still holds
/// the change it was saved at, the same change, and every change after it;
/// the start reads those as a running server follows other processes' writes, before it
/// serves.
///
/// The server saves it on a clean stop (``ReportService/saveIndex(to:)``): through a
/// temporary file renamed into place, so a crash midway leaves the last whole one (which
/// the next start refuses if writes came since).
///
/// A store several replicas share may keep a copy of one replica's file
/// (``SharedIndexStorage``, ``ReportService/shareIndex(from:unlessWithin:saved:)``): a
/// start whose own file is refused (a new replica has none) fetches the copy into its place
/// and reads it under the same checks.
public enum SavedIndex {
    /// The format's name and version; another is refused. A change to what is saved or to
    /// how the index derives it from the rows is a new version.
    static let format = "posterwatch index 2"

    /// The sections of the period trees, a level of periods each.
    static let periodSections = (0..<ClusterIndex.periodLevels).map { "periods \($0)" }
    /// The levels of periods read on the tally's thread (the one-day trees: the tally is
    /// the lighter of the two at ten million reports).
    static let levelsBesideTally: Set<Int> = [ClusterIndex.periodLevels - 1]

    /// Why a saved index was not used.
    public struct Refused: Error, CustomStringConvertible, Sendable {
        public var description: String
        /// Whether the database's copy (``SharedIndexStorage``) was fetched and refused: a
        /// copy no replica can read, to be replaced once the index is built.
        var copyRefused = false
    }

    /// What a saved index is for: the reference data's codes, the grid, and the layout of
    /// the records saved byte for byte.
    static func fingerprint(_ reference: ReferenceData, _ grid: ClusterGrid) -> String {
        let codes = [reference.statuses.map(\.code), reference.districts.map(\.code), reference.objectTypes.map(\.code)]
            .map { $0.joined(separator: "\u{1F}") }.joined(separator: "\u{1E}")
        let text = codes + "\u{1D}\(grid.cellSize)/\(grid.maxZoom)/\(grid.minPoints)\u{1D}\(ClusterIndex.savedLayout)\u{1D}\(ReportTally.savedLayout)"
        return SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// What tells change `seq` from another write given the same number in a log restored
    /// from a backup and written on since; nil when `changes` (those after `seq - 1`, as
    /// read) do not begin with it.
    static func mark(of changes: [ChangeRow], at seq: Int64) -> String? {
        guard seq > 0, let change = changes.first, change.seq == seq else { return nil }
        // Not the phone number of a phone's change: the file holds what the public map shows.
        return "\(change.seq) \(change.action.rawValue) \(change.reportID) \(change.at.milliseconds)"
    }

    /// The name a save writes under before it renames the file into place.
    static func partialPrefix(_ target: URL) -> String { "." + target.lastPathComponent + ".partial-" }

    /// Deletes what saves killed midway left beside `path` (an hour old at least: not a
    /// save another process is making now).
    static func removeLeftovers(beside path: String) {
        let target = URL(fileURLWithPath: path), folder = target.deletingLastPathComponent()
        let prefix = partialPrefix(target), anHourAgo = Date().addingTimeInterval(-3_600)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(prefix) {
            let file = folder.appendingPathComponent(name)
            let modified = (try? FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date) ?? .distantFuture
            if modified < anHourAgo { try? FileManager.default.removeItem(at: file) }
        }
    }

    /// The index and tally saved at `path`, when they are the database's current state or
    /// at most `catchUp` changes behind it (see above), and the change they hold; else, when
    /// the store keeps a copy (``SharedIndexStorage``) near enough, the copy fetched to
    /// `path` (`fetched`), under the same checks.
    static func load(
        _ path: String, storage: any ReportStorage, grid: ClusterGrid, reference: ReferenceData, catchUp: Int64
    ) async throws -> (index: ClusterIndex, tally: ReportTally, change: Int64, fetched: Bool) {
        do {
            let (index, tally, change) = try await loadFile(path, storage: storage, grid: grid, reference: reference, catchUp: catchUp)
            return (index, tally, change, false)
        } catch let refused as Refused {
            guard let shared = storage as? any SharedIndexStorage else { throw refused }
            let (kept, last) = try await Blocking.offPool { (try await shared.sharedIndexChange(), try await storage.lastChange()) }
            guard let kept else { throw refused }
            guard kept <= last, last - kept <= catchUp else {
                throw Refused(description: "\(refused); nor the database's copy: saved at change \(kept), the database is at change \(last)")
            }
            do {
                try await fetch(shared, to: path)
                let (index, tally, change) = try await loadFile(path, storage: storage, grid: grid, reference: reference, catchUp: catchUp)
                return (index, tally, change, true)
            } catch {
                throw Refused(description: "\(refused); nor the database's copy: \(loggable(error))", copyRefused: true)
            }
        }
    }

    /// The store's copy written to `path` through a temporary file renamed into place.
    private static func fetch(_ shared: any SharedIndexStorage, to path: String) async throws {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(partialPrefix(target) + UUID().uuidString)
        do {
            guard try await Blocking.offPool({ try await shared.copySharedIndex(to: temporary.path) }) != nil else {
                throw Refused(description: "the database no longer keeps one")
            }
            try Durable.rename(temporary, to: target)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// The file at `path` alone (see ``load(_:storage:grid:reference:catchUp:)``).
    private static func loadFile(
        _ path: String, storage: any ReportStorage, grid: ClusterGrid, reference: ReferenceData, catchUp: Int64
    ) async throws -> (index: ClusterIndex, tally: ReportTally, change: Int64) {
        removeLeftovers(beside: path)
        guard FileManager.default.fileExists(atPath: path) else { throw Refused(description: "there is none") }
        let file: FlatFileReader
        do { file = try FlatFileReader(path: path) } catch { throw Refused(description: "\(error)") }
        let p = file.properties
        guard p["format"] == format else { throw Refused(description: "it is of another format (\(p["format"] ?? "none"))") }
        guard p["fingerprint"] == fingerprint(reference, grid) else { throw Refused(description: "it was saved for other reference data or another grid") }
        let (last, name) = try await Blocking.offPool { (try await storage.lastChange(), try await storage.changeLogName()) }
        guard p["change_log"] == name else { throw Refused(description: "it was saved from another database") }
        guard let change = p["change"].flatMap(Int64.init), change <= last else {
            throw Refused(description: "it was saved at change \(p["change"] ?? "none"), the database is at change \(last)")
        }
        try await checkHistory(from: change, mark: p["change_mark"], last: last, limit: catchUp, storage: storage)
        let statusCount = reference.statuses.count, districtCount = reference.districts.count, typeCount = reference.objectTypes.count
        // The index and the tally on two threads, a level of period trees moved beside the
        // tally so that the two take about as long: a start waits for the longer. (The
        // period trees on a third thread took longer: the threads spend a third of their
        // time in page faults, which then contend.)
        func level(_ level: Int) throws -> ClusterIndex.SavedLevel {
            try file.read(section: Self.periodSections[level]) { try ClusterIndex.readPeriodLevel(&$0, level: level, grid: grid, statusCount: statusCount) }
        }
        async let whole = Blocking.offPool {
            let whole = try file.read(section: "clusters") { try ClusterIndex.readWhole(&$0, grid: grid, statusCount: statusCount) }
            return (whole, try (0..<ClusterIndex.periodLevels).filter { !Self.levelsBesideTally.contains($0) }.map(level))
        }
        async let tally = Blocking.offPool {
            let tally = try file.read(section: "tally") {
                try ReportTally(statusCount: statusCount, districtCount: districtCount, objectTypeCount: typeCount, loading: &$0)
            }
            return (tally, try Self.levelsBesideTally.sorted().map(level))
        }
        do {
            let ((read, levels), (tally, moreLevels)) = (try await whole, try await tally)
            let index = try ClusterIndex(grid: grid, statusCount: statusCount, whole: read, periods: (levels + moreLevels).sorted { $0.level < $1.level })
            let loaded = (index, tally, change)
            Task.detached { loaded.1.prepareForWrites() }
            return loaded
        } catch {
            throw Refused(description: "\(error)")
        }
    }

    /// Throws unless an index saved at change `from` (its ``mark(of:at:)`` `mark`) is the log's
    /// history: at its last number `last` and, when the log still holds change `from`, the
    /// same change; or behind, and then brought up to date by reading the changes between:
    /// at most `limit` of them, and the log still holds change `from`, the same one, and all
    /// after it.
    private static func checkHistory(from: Int64, mark: String?, last: Int64, limit: Int64, storage: any ReportStorage) async throws {
        let kept = from > 0 ? Self.mark(of: try await Blocking.offPool { try await storage.changes(after: from - 1, limit: 1) }.rows, at: from) : nil
        if from == last {
            // A log restored from a backup and written on to the same number.
            if let kept, let mark, kept != mark {
                throw Refused(description: "the database's change \(from) is another write than the one it was saved at (restored from a backup and written on since)")
            }
            return
        }
        let behind = "it was saved at change \(from), the database is at change \(last)"
        guard last - from <= limit else {
            throw Refused(description: limit == 0 ? behind : "\(behind): more than the \(limit) changes a start catches up")
        }
        guard let mark, let kept, kept == mark else {
            throw Refused(description: "\(behind), and the change log no longer holds the change it was saved at (forgotten, or the database restored from a backup)")
        }
    }

    /// Writes `index` and `tally`, which hold exactly the changes through `change` (its
    /// ``mark(of:at:)`` `mark`, nil when the log no longer holds it), to `path`.
    static func save(
        _ index: ClusterIndex, _ tally: ReportTally, change: Int64, mark: String?, changeLog: String, fingerprint: String, to path: String
    ) throws {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(partialPrefix(target) + UUID().uuidString)
        do {
            let file = try FlatFileWriter(path: temporary.path)
            try index.save(to: file, sections: ("clusters", periodSections))
            try tally.save(to: file)
            try file.endSection("tally")
            var properties = ["format": format, "fingerprint": fingerprint, "change_log": changeLog, "change": String(change)]
            properties["change_mark"] = mark
            try file.finish(properties: properties)
            try Durable.rename(temporary, to: target)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}

extension ReportService {
    /// How the service comes by its index at start.
    public enum IndexStart: Sendable {
        /// Built from the rows before the service is returned (a command, a test).
        case build
        /// Read from the index saved at `path` when it is current, or at most `catchUp`
        /// changes behind (``SavedIndex``: the changes since are read from the log before the
        /// service is returned); otherwise built from the rows in the background: until
        /// then, what needs the index throws ``IndexBuilding`` and the rest of the service works.
        case saved(path: String, catchUp: Int64 = 0)
    }

    /// Whether the index is built (false while a start builds it in the background).
    public var indexReady: Bool { ready.load(ordering: .acquiring) }

    /// Throws ``IndexBuilding`` until the index is built.
    public func requireIndex() throws(IndexBuilding) {
        guard indexReady else { throw IndexBuilding() }
    }

    /// Saves the index and the tally to `path` for the next start, at the change log's
    /// last number: the other processes' writes are followed first, and the service's own
    /// wait meanwhile. Returns the change number saved at; nil when the index is not built
    /// yet, refused a write, or writes of other processes keep coming (nothing is saved then).
    @discardableResult
    public func saveIndex(to path: String) async throws -> Int64? {
        guard indexReady, !diverged.isRaised else { return nil }
        let name = try await read { try await $0.changeLogName() }
        let fingerprint = SavedIndex.fingerprint(reference, index.grid)
        for _ in 0..<3 {
            try await catchUp()
            let through = followed.change
            // Inside a write of the group commit, no write of this process lands meanwhile:
            // the index holds exactly the changes through `through` when none follows it.
            // Copied there (cheaply: the arrays are shared until written), and written to
            // the file after, so the database's writers do not wait for the disk.
            let copies = try await commits.perform { [self] t in
                guard try t.changes(after: through, limit: 1).isEmpty, try t.prunedThrough() <= through,
                      followed.change == through
                else { return ((ClusterIndex, ReportTally, String?)?.none, IndexEffect()) }
                let mark = SavedIndex.mark(of: try t.changes(after: through - 1, limit: 1), at: through)
                return ((index.frozenCopy(), tally.frozenCopy(), mark), IndexEffect())
            }
            if let (index, tally, mark) = copies {
                try await Blocking.offPool {
                    try SavedIndex.save(index, tally, change: through, mark: mark, changeLog: name, fingerprint: fingerprint, to: path)
                }
                return through
            }
        }
        return nil
    }

    /// Whether the store keeps a copy of a saved index for the replicas that share it
    /// (``SharedIndexStorage``).
    public var sharesIndex: Bool { storage is any SharedIndexStorage }

    /// Replaces the store's copy of a saved index (``SharedIndexStorage``) with this
    /// replica's, unless the copy is at most `slack` changes behind: the file `saved` at
    /// that change (just saved by ``saveIndex(to:)``), or else the index saved to `path` now.
    /// A copy this replica's start fetched and refused is replaced however near.
    /// Returns the change shared at; nil when the copy was near enough, the store keeps
    /// none, the index could not be saved, or another replica shared a later one meanwhile.
    @discardableResult
    public func shareIndex(from path: String, unlessWithin slack: Int64, saved: Int64? = nil) async throws -> Int64? {
        guard let shared = storage as? any SharedIndexStorage, indexReady else { return nil }
        let slack = sharedCopyRefused.load(ordering: .acquiring) ? nil : slack
        let (kept, last) = try await Blocking.offPool { (try await shared.sharedIndexChange(), try await storage.lastChange()) }
        if type(of: shared).keeps(kept, over: saved ?? last, unlessWithin: slack) { return nil }
        var change = saved
        if change == nil { change = try await saveIndex(to: path) }
        guard let change else { return nil }
        guard try await Blocking.offPool({ try await shared.share(file: path, change: change, unlessWithin: slack) }) else { return nil }
        sharedCopyRefused.store(false, ordering: .releasing)
        return change
    }

    /// Builds the index from the rows, trying again every few seconds should a read fail,
    /// and follows the writes made meanwhile (those committed after the rows' read reached
    /// the index it replaced) before it answers.
    func buildInBackground() async {
        while !Task.isCancelled {
            do {
                try await rebuild()
                try await followLog()
                ready.store(true, ordering: .releasing)
                return
            } catch {
                startProblem.withLock { $0 = ($0.map { $0 + "; " } ?? "") + "building the index failed, trying again: \(error)" }
                try? await Task.sleep(for: .seconds(5))
            }
        }
    }

    /// What happened to the saved index at start, or to a background build (nil: nothing to say).
    public var indexStartNote: String? { startProblem.withLock { $0 } }
}

/// The index is still being built (a start that could not use a saved one): what needs it
/// waits. The rest of the service works meanwhile.
public struct IndexBuilding: Error, CustomStringConvertible, Sendable {
    public var description: String { "the map's index is being built after a restart; try again in a few seconds" }
}
