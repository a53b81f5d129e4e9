import Foundation
import Geometry
import NIOCore
import Synchronization

/// Live changes for subscribers (Server-Sent Events): one reader follows the changes
/// table and hands each new change, as an SSE event, to every subscriber that may see it.
///
/// The hub reads the table, not the writes of this process, so the writes of another
/// process on the same database (an import, the CLI, a second server) reach subscribers
/// too, within one ``pollInterval``. It reads only while someone subscribes. This
/// process's own commits ring it (``nudge()``), so their events leave at once; reads are
/// kept ``batchWindow`` apart, because each one costs a socket write per subscriber.
///
/// A subscriber is a queue that a task reads, or a connection (``ChangeConnection``) that
/// the hub writes to itself, on the connection's event loop: each read of the table then
/// costs each event loop one job for all its subscribers, not each subscriber a task's
/// wake and a hop to its loop.
///
/// What a subscriber has not taken is bounded: a queue holds ``queueLimit`` chunks (a
/// chunk being what one read of the table brought it), a connection what it says it may
/// (``ChangeConnection/send(_:)``). One that does not keep up is cut off (its stream ends)
/// instead of holding back the reader, the writers or memory. Its client reconnects with
/// `Last-Event-ID` and resumes where it stopped.
public final class ChangeHub: Sendable {
    /// One event's bytes, as SSE wants them on the wire.
    public typealias Event = [UInt8]
    /// What a subscriber receives from one read of the table: its events' bytes, in a
    /// buffer that subscribers who see the same events share (written to each socket,
    /// copied for none).
    public typealias Chunk = ByteBuffer

    /// A subscriber's place: live events come after `cursor`; the subscriber reads the
    /// feed up to it itself (``catchUp(after:until:staff:box:)``).
    public struct Subscription: Sendable {
        public let cursor: Int64
        /// Its chunks, or for a subscriber with a connection none; ends with the subscription.
        public let events: AsyncStream<Chunk>
        let id: Int
    }

    struct Subscriber {
        /// Only changes after this one go to the subscriber (what it had, or the cursor
        /// it joined at, whichever is later).
        let after: Int64
        let staff: Bool
        let box: BoundingBox?
        /// Its chunks, unless it has a connection; finished when it ends, either way.
        let continuation: AsyncStream<Chunk>.Continuation
        let connection: (any ChangeConnection)?
        /// A connection's chunks until it opens (``open(_:)``), after its catch-up.
        var held: [Chunk]?
    }

    struct State {
        var cursor: Int64
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        /// Whether the reader runs.
        var reading = false
    }

    public let feed: ChangeFeed
    public let pollInterval: Duration
    public let heartbeatInterval: Duration
    public let queueLimit: Int
    /// The least time between two reads, however often the hub is nudged.
    public let batchWindow: Duration
    private let state: Mutex<State>
    /// While the reader runs: what wakes it (the poll's tick, or a nudge). One ring is kept
    /// however many come while it reads, so a burst of commits is one read. A lock of its
    /// own: a commit's ring must never wait for a delivery, which holds ``state``.
    private let bell = Mutex<AsyncStream<Void>.Continuation?>(nil)
    /// Subscribers cut off for falling behind (tests, metrics).
    public let cutOff = Atomic<Int>(0)

    /// Called after each read that found changes, before any staff subscriber is handed
    /// them: the server brings the account events up to date here, which closes the
    /// subscriptions of credentials that no longer grant staff events. What the read found
    /// was committed after any revocation the call can see, so none of it reaches one.
    let beforeStaffDelivery: (@Sendable () async -> Void)?

    public init(
        feed: ChangeFeed, pollInterval: Duration = .milliseconds(20), batchWindow: Duration = .milliseconds(5),
        heartbeatInterval: Duration = .seconds(15), queueLimit: Int = 1_024, beforeStaffDelivery: (@Sendable () async -> Void)? = nil
    ) {
        self.beforeStaffDelivery = beforeStaffDelivery
        self.feed = feed
        self.pollInterval = pollInterval
        self.batchWindow = batchWindow
        self.heartbeatInterval = heartbeatInterval
        self.queueLimit = queueLimit
        state = Mutex(State(cursor: 0))  // read at the first subscription
    }

    /// Adds a subscriber that has the changes up to `since`; its events stop when it
    /// ends (``unsubscribe(_:)``) or when it falls behind. Its chunks come in its
    /// subscription's `events`; or, given a `connection`, are written to it, from when
    /// it opens (``open(_:)``), and `events` only ends.
    public func subscribe(after since: Int64, staff: Bool, box: BoundingBox?, connection: (any ChangeConnection)? = nil) async throws -> Subscription {
        let (events, continuation) = AsyncStream<Chunk>.makeStream(bufferingPolicy: .bufferingOldest(queueLimit))
        // An idle hub has not followed the table: it starts from the last change, read now
        // (read before the lock, it is at most older: what came since is live).
        let last = state.withLock { $0.reading } ? nil : try await feed.lastChange()
        let (subscription, bell) = state.withLock { state in
            if !state.reading, let last { state.cursor = max(state.cursor, last) }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(
                after: since, staff: staff, box: box, continuation: continuation, connection: connection, held: connection == nil ? nil : [])
            var bell: AsyncStream<Void>?
            if !state.reading {
                let (stream, ringer) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                self.bell.withLock { $0 = ringer }
                state.reading = true
                bell = stream
            }
            return (Subscription(cursor: state.cursor, events: events, id: id), bell)
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(subscription) }
        if let bell { Task.detached { [self] in await read(woken: bell) } }
        return subscription
    }

    /// Starts writing to a subscriber's connection: what the hub held for it, then its
    /// live chunks. Called once its catch-up is written, so that they follow it.
    public func open(_ subscription: Subscription) {
        state.withLock { state in
            guard let subscriber = state.subscribers[subscription.id], let connection = subscriber.connection,
                  let held = subscriber.held else { return }
            state.subscribers[subscription.id]?.held = nil
            // Under the lock, as each read's writes are: a connection's chunks reach its
            // loop in the order the reads made them.
            var writes = Writes()
            for chunk in held { writes.add(chunk, to: subscription.id, connection) }
            writes.start(for: self)
        }
    }

    public func unsubscribe(_ subscription: Subscription) {
        let gone = state.withLock { $0.subscribers.removeValue(forKey: subscription.id) }
        gone?.continuation.finish()
    }

    /// Ends a subscription and closes its connection, if any, at once: nothing more is
    /// written to it (its caller may no longer see what it was given).
    public func close(_ subscription: Subscription) {
        guard let gone = state.withLock({ $0.subscribers.removeValue(forKey: subscription.id) }) else { return }
        gone.continuation.finish()
        gone.connection?.cutOff()
    }

    /// Ends a subscriber that fell behind; its connection, if any, is closed at once, since
    /// what it has not sent waits behind a client that does not read.
    private func cut(_ id: Int) {
        guard let subscriber = state.withLock({ $0.subscribers.removeValue(forKey: id) }) else { return }
        cut(subscriber)
    }

    private func cut(_ subscriber: Subscriber) {
        subscriber.continuation.finish()
        subscriber.connection?.cutOff()
        cutOff.add(1, ordering: .relaxed)
    }

    /// The chunks of one read (or of an opening) for connections, gathered by event loop:
    /// one job on each loop writes them all.
    struct Writes {
        private var byLoop: [ObjectIdentifier: (loop: any EventLoop, sends: [(id: Int, connection: any ChangeConnection, chunk: Chunk)])] = [:]

        mutating func add(_ chunk: Chunk, to id: Int, _ connection: any ChangeConnection) {
            let loop = connection.eventLoop
            byLoop[ObjectIdentifier(loop), default: (loop, [])].sends.append((id, connection, chunk))
        }

        func start(for hub: ChangeHub) {
            for (loop, sends) in byLoop.values {
                loop.execute {
                    var cut: Set<Int> = []
                    for send in sends where !cut.contains(send.id) && !send.connection.send(send.chunk) {
                        cut.insert(send.id)
                        hub.cut(send.id)
                    }
                }
            }
        }
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// One page of what a subscriber sends before its live events: the SSE events of the
    /// feed after `since`, up to `until` (its subscription's cursor), as `staff` may see
    /// them and within `box`; and where the next page starts, nil after the last.
    /// Throws ``ChangesUnavailable`` for a `since` the feed cannot continue from.
    public func catchUp(after since: Int64, until: Int64, staff: Bool, box: BoundingBox?) async throws -> (events: [Event], next: Int64?) {
        guard since < until else { return ([], nil) }
        let page = try await feed.page(since: since, limit: ChangeFeed.maxPage, staff: staff)
        let events = try page.entries.filter { $0.seq <= until && Self.shows($0, in: box) }.map(Self.event)
        let done = page.entries.count < ChangeFeed.maxPage || page.lastSeq >= until
        return (events, done ? nil : page.lastSeq)
    }

    /// `id`, `event` and `data` lines of one change.
    static func event(_ entry: ChangeEntry) throws -> Event {
        var out = Array("id: \(entry.seq)\nevent: \(entry.type.rawValue)\ndata: ".utf8)
        try ChangeJSON.append(entry, to: &out)
        out += Array("\n\n".utf8)
        return out
    }

    /// The first bytes after the catch-up: how long a client waits before reconnecting
    /// (EventSource's `retry`), and a comment, so that a client sees the stream is open.
    public static let opening = Array("retry: 2000\n: live\n\n".utf8)

    /// A comment line, which keeps proxies from closing a quiet stream.
    static let heartbeat = Array(": heartbeat\n\n".utf8)

    /// What one read of the table brought, in one form (the public's or staff's): each
    /// entry with its event, and the chunk of all of them, made once for the subscribers
    /// without a box who lack all of them (the common case).
    struct Read {
        var entries: [(entry: ChangeEntry, event: Event)]
        var whole: Chunk?

        init(_ entries: [ChangeEntry], beat: Bool) throws {
            self.entries = try entries.map { ($0, try ChangeHub.event($0)) }
            let bytes = self.entries.flatMap(\.event) + (beat ? ChangeHub.heartbeat : [])
            whole = bytes.isEmpty ? nil : ByteBuffer(bytes: bytes)
        }

        /// The chunk for a subscriber: the shared one, or one of its own (a box, or events
        /// it had already).
        func chunk(after: Int64, box: BoundingBox?, beat: Bool) -> Chunk? {
            if box == nil, after < entries.first?.entry.seq ?? .max { return whole }
            let bytes = entries.filter { $0.entry.seq > after && ChangeHub.shows($0.entry, in: box) }.flatMap(\.event) + (beat ? ChangeHub.heartbeat : [])
            return bytes.isEmpty ? nil : ByteBuffer(bytes: bytes)
        }
    }

    /// Whether an entry belongs to a subscriber's area: one whose report it sees inside
    /// the box, and every entry without a report (a tombstone: removing a report one
    /// never had changes nothing).
    static func shows(_ entry: ChangeEntry, in box: BoundingBox?) -> Bool {
        guard let box, let report = entry.report else { return true }
        return box.contains(report.coordinate)
    }

    /// Tells the hub that this process has just committed changes: it reads them now
    /// (or once ``batchWindow`` has passed since its last read) instead of at its next poll.
    public func nudge() {
        bell.withLock { _ = $0?.yield() }
    }

    /// Follows the table while anyone subscribes: a read at each ring of the bell, which
    /// a tick rings every ``pollInterval`` and ``nudge()`` in between.
    private func read(woken rings: AsyncStream<Void>) async {
        let ticks = Task { [pollInterval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: pollInterval)
                nudge()
            }
        }
        defer { ticks.cancel() }
        var lastBeat = ContinuousClock.now
        for await _ in rings {
            let started = ContinuousClock.now
            let (cursor, kinds) = state.withLock { state -> (Int64, Set<Bool>) in
                (state.cursor, Set(state.subscribers.values.map(\.staff)))
            }
            if kinds.isEmpty {
                // Stop, unless someone subscribed since the check (and so found the bell).
                let stopped = state.withLock { state in
                    guard state.subscribers.isEmpty else { return false }
                    state.reading = false
                    bell.withLock { ringer in
                        ringer?.finish()
                        ringer = nil
                    }
                    return true
                }
                if stopped { return }
                continue
            }
            let beat = started - lastBeat >= heartbeatInterval
            // A failed read is tried again at the next ring.
            if (try? await deliver(after: cursor, kinds: kinds, beat: beat)) != nil, beat { lastBeat = started }
            try? await Task.sleep(until: started + batchWindow)
        }
    }

    /// One read of the table after `cursor`, handed to every subscriber: as staff see it
    /// when any staff listens, the public form derived from it.
    private func deliver(after cursor: Int64, kinds: Set<Bool>, beat: Bool) async throws {
        let page = try await feed.page(since: cursor, limit: ChangeFeed.maxPage, staff: kinds.contains(true))
        if kinds.contains(true), !page.entries.isEmpty { await beforeStaffDelivery?() }
        var forms: [Bool: Read] = [:]
        for staff in kinds {
            forms[staff] = try Read(page.entries.map { staff ? $0 : $0.publicForm }, beat: beat)
        }
        let behind = state.withLock { state in
            var behind: [Subscriber] = []
            var writes = Writes()
            for (id, subscriber) in state.subscribers {
                guard let form = forms[subscriber.staff] else {
                    // Joined during the read, of a kind it did not render: cut off
                    // rather than passed over, it resumes from its last event.
                    if !page.entries.isEmpty {
                        state.subscribers[id] = nil
                        behind.append(subscriber)
                    }
                    continue
                }
                // One chunk a read: a write to the socket for all of them, not one each.
                guard let chunk = form.chunk(after: subscriber.after, box: subscriber.box, beat: beat) else { continue }
                let taken: Bool
                if let held = subscriber.held {  // a connection not open yet
                    taken = held.count < queueLimit
                    if taken { state.subscribers[id]?.held?.append(chunk) }
                } else if let connection = subscriber.connection {
                    writes.add(chunk, to: id, connection)
                    taken = true  // or cut off by its loop
                } else if case .dropped = subscriber.continuation.yield(chunk) {
                    taken = false
                } else {
                    taken = true
                }
                if !taken {
                    state.subscribers[id] = nil
                    behind.append(subscriber)
                }
            }
            state.cursor = max(state.cursor, page.entries.last?.seq ?? cursor)
            writes.start(for: self)
            return behind
        }
        // Outside the lock: ending a stream runs its termination handler.
        for subscriber in behind { cut(subscriber) }
    }
}
