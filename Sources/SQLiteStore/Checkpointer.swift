import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Copies the write-ahead log back into the database on a connection and a thread of its
/// own, so that the writer never does.
///
/// SQLite's default is that the commit which takes the log past 1,000 pages runs the
/// checkpoint itself, writing and syncing the database file while every writer behind it
/// waits: in the write bench that was a third of the writer thread's time. Here the
/// writer connection does not checkpoint (`wal_autocheckpoint = 0`) and this thread runs
/// passive checkpoints, which never block the writer or a reader, each time it is nudged
/// after a commit (at most one at a time: nudges that arrive meanwhile fold into the next
/// run) and every second regardless.
///
/// While commits keep coming, a checkpoint on another connection never catches up with
/// the writer, and only a log copied to its end can start again from its beginning (the
/// writer's next transaction does that, unless a reader still reads the old log): so once
/// the log passes ``restartPages``, the writer is asked to finish the copy itself between
/// two transactions (``restartDue``): the last few pages, since the passive runs have
/// copied the rest.
final class Checkpointer: Sendable {
    /// 64 MiB of 4 KiB pages.
    static let restartPages: Int32 = 16_384

    private let connection: DatabaseQueue
    private let wake = DispatchSemaphore(value: 0)
    private let nudged = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    /// The log has grown past ``restartPages``: the writer should finish a checkpoint.
    let restartDue = Atomic<Bool>(false)
    /// Checkpoints run so far (tests).
    let runs = Atomic<Int>(0)

    init(path: String) throws {
        var configuration = Configuration()
        configuration.label = "posterwatch.checkpointer"
        connection = try DatabaseQueue(path: path, configuration: configuration)
        let thread = Thread { [self] in run() }
        thread.name = "posterwatch.checkpointer"
        thread.start()
    }

    /// Asks for a checkpoint soon (after a commit).
    func nudge() {
        if !nudged.exchange(true, ordering: .acquiringAndReleasing) { wake.signal() }
    }

    /// Ends the thread after the checkpoint it may be running.
    func stop() {
        stopped.store(true, ordering: .releasing)
        wake.signal()
    }

    private func run() {
        while !stopped.load(ordering: .acquiring) {
            _ = wake.wait(timeout: .now() + .seconds(1))
            nudged.store(false, ordering: .releasing)
            try? connection.writeWithoutTransaction { db in
                var pages: Int32 = 0, copied: Int32 = 0
                _ = sqlite3_wal_checkpoint_v2(db.sqliteConnection, nil, SQLITE_CHECKPOINT_PASSIVE, &pages, &copied)
                // Only once caught up: what is left for the writer is what came meanwhile.
                if pages > Self.restartPages && copied == pages { restartDue.store(true, ordering: .releasing) }
            }
            runs.add(1, ordering: .relaxed)
        }
    }
}
