import Foundation
import StorePorts

/// A city moved from one store to another (`posterwatch migrate`): every table of
/// ``TransferTables`` in order, batch by batch, then the photos.
///
/// Rules:
/// - **A target that holds data is refused**, unless it holds what an earlier, unfinished
///   move from the same source left (then the move goes on), or the caller says to copy
///   into it anyway (``Options/intoExisting``).
/// - **Run again after an interruption, nothing is written twice**: a row whose key the
///   target holds is left as it is; a photo it holds is not copied again.
/// - Writers should be stopped: a row changed in the source after it was copied is not
///   copied again.
public struct StoreTransfer: Sendable {
    public struct Options: Sendable {
        public var batchSize = 1_000
        /// Copy into a target that holds data of its own.
        public var intoExisting = false
        /// Stop after this many batches (tests interrupt a move with it).
        public var stopAfterBatches: Int?
        public init() {}
    }

    /// What a move did.
    public struct Summary: Sendable, Equatable {
        /// Table → rows read from the source.
        public var rows: [String: Int] = [:]
        /// Rows the target did not hold yet.
        public var newRows = 0
        public var photos = 0
        public var newPhotos = 0
    }

    let source: any TableDump
    let target: any TableLoad
    /// The source's photo names, its pictures and where the target keeps them.
    let photoNames: @Sendable () async throws -> Set<String>
    let sourcePhotos: any PhotoStorage
    let targetPhotos: any PhotoStorage

    public init(
        source: any TableDump, target: any TableLoad, photoNames: @escaping @Sendable () async throws -> Set<String>, sourcePhotos: any PhotoStorage,
        targetPhotos: any PhotoStorage
    ) {
        self.source = source
        self.target = target
        self.photoNames = photoNames
        self.sourcePhotos = sourcePhotos
        self.targetPhotos = targetPhotos
    }

    /// Moves everything; `progress` hears the rows and photos done of all.
    /// `sourceName` names the source for the target's record (never a password).
    public func run(sourceName: String, options: Options = Options(), progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }) async throws -> Summary {
        let earlier = try await target.transferSource()
        if try await target.holdsData(), earlier != sourceName, !options.intoExisting {
            throw TargetHoldsData(earlierSource: earlier)
        }
        if earlier != sourceName { try await target.beginTransfer(from: sourceName) }
        var counts: [(String, Int)] = []
        for (table, _) in TransferTables.all { counts.append((table, try await source.rowCount(table))) }
        let names = try await photoNames().sorted()
        let total = counts.reduce(0) { $0 + $1.1 } + names.count
        var summary = Summary(), done = 0, batches = 0
        for (table, count) in counts {
            var offset = 0
            while offset < count {
                if let stop = options.stopAfterBatches, batches >= stop { throw TransferInterrupted(batches: batches) }
                let batch = try await source.rows(of: table, offset: offset, limit: options.batchSize)
                if batch.rows.isEmpty { break }
                summary.newRows += try await target.load(batch)
                summary.rows[table, default: 0] += batch.rows.count
                offset += batch.rows.count
                done += batch.rows.count
                batches += 1
                progress(done, total)
            }
        }
        for name in names {
            summary.photos += 1
            if try await targetPhotos.read(sha256: name, thumbnail: true) == nil,
               let image = try await sourcePhotos.read(sha256: name, thumbnail: false),
               let thumbnail = try await sourcePhotos.read(sha256: name, thumbnail: true)
            {
                try await targetPhotos.store(sha256: name, image: Array(image), thumbnail: Array(thumbnail))
                summary.newPhotos += 1
            }
            done += 1
            if done % 100 == 0 || done == total { progress(done, total) }
        }
        try await target.finishTransfer()
        return summary
    }
}

/// The target holds data that no unfinished move from this source left.
public struct TargetHoldsData: Error, Sendable, CustomStringConvertible {
    public var earlierSource: String?
    public var description: String {
        "the target database already holds data"
            + (earlierSource.map { " (moved from \($0))" } ?? "")
            + "; move into an empty database, or pass --into-existing to copy into it anyway (rows whose keys it holds are left as they are)"
    }
}

/// A move stopped on purpose after a number of batches (tests).
public struct TransferInterrupted: Error, Sendable, CustomStringConvertible {
    public var batches: Int
    public var description: String { "stopped after \(batches) batches, as asked; run the same command again to go on" }
}
