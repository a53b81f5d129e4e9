import Accounts
import ChangeFeed
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Offloading
import ServiceLifecycle

/// `GET /v1/changes`: the numbered writes since a sequence number, for offline apps and
/// other systems that keep a copy of the data; `GET /v1/changes/stream`: the same as
/// Server-Sent Events, as they happen.
struct ChangeRoutes {
    let hub: ChangeHub
    /// Whose staff streams end when their credential no longer grants them.
    let accounts: AccountService
    /// The bytes a subscriber's connection may hold unsent before it is cut off.
    let unsentLimit: Int
    var feed: ChangeFeed { hub.feed }

    func register(on router: Router<AppRequestContext>) {
        router.get(RouterPath(Endpoint.changesStream.path)) { request, context in try await stream(request, context) }
        router.read(.changes) { _, query, context in
            let since = try query.integer("since", in: 0...Int(Int64.max), default: 0)!
            let limit = try query.integer("limit", in: 1...ChangeFeed.maxPage, default: 100, clampedTo: ChangeFeed.maxPage)!
            let staff = context.caller?.isStaff == true
            let page = try await feed.page(since: Int64(since), limit: limit, staff: staff)
            var response = Responses.body(try ChangeJSON.page(page), type: "application/json")
            response.headers[.vary] = "Authorization"
            if staff { response.headers[.cacheControl] = "private, no-store" }
            return response
        }
    }
}

extension ChangeRoutes {
    /// The stream: first what the client lacks up to its subscription's cursor, page by
    /// page, then live events until the client goes, or falls so far behind that the hub
    /// cuts it off (it reconnects with `Last-Event-ID`). A subscriber whose answer is never
    /// written (its client gone at once) is cut off in the same way once its queue fills.
    /// A staff stream is closed the moment its caller's credential stops granting staff
    /// events (``CredentialWatch``): a logout, a disabled or demoted account, an expired
    /// token. The client reconnects and is then served as what it is now.
    private func stream(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let query = try QueryParameters(request, endpoint: .changesStream)
        let box = try query.bbox()
        let staff = context.caller?.isStaff == true
        let asked = try Self.lastEventID(request) ?? query.integer("since", in: 0...Int(Int64.max)).map(Int64.init)
        let since = if let asked { asked } else { try await feed.lastChange() }
        _ = try await feed.page(since: since, limit: 1, staff: false)  // a 410 now, not an empty stream
        let (hub, accounts, identity) = (self.hub, self.accounts, context.identity)
        let connection = ChangeStreamConnection(channel: context.channel, limit: unsentLimit)
        // Subscribed when the body is written: a HEAD's never is.
        let body = ResponseBody { writer in
            let subscription = try await hub.subscribe(after: since, staff: staff, box: box, connection: connection)
            defer { hub.unsubscribe(subscription) }
            // The client gone: the hub writes no more to it, and this response ends.
            connection.channel.closeFuture.whenComplete { _ in hub.unsubscribe(subscription) }
            let watch = staff ? identity.map { accounts.watch($0, while: .supervisor) { hub.close(subscription) } } : nil
            defer { watch.map(accounts.unwatch) }
            var next: Int64? = since
            while let after = next, watch?.isEnded != true {
                let page = try await hub.catchUp(after: after, until: subscription.cursor, staff: staff, box: box)
                // As the hub does before a live delivery: a revocation committed before the
                // page's changes closes the stream before they are written.
                if staff, !page.events.isEmpty { try await accounts.followAccountEvents() }
                guard watch?.isEnded != true else { break }
                if !page.events.isEmpty { try await writer.write(ByteBuffer(bytes: page.events.joined())) }
                next = page.next
            }
            try await writer.write(ByteBuffer(bytes: ChangeHub.opening))
            hub.open(subscription)
            // The hub writes the live events; the response waits for the subscription to
            // end. A stream never ends on its own: it must not hold the server's shutdown.
            await withGracefulShutdownHandler {
                for await _ in subscription.events {}
            } onGracefulShutdown: {
                hub.unsubscribe(subscription)
                // Its end would wait behind what a client that does not read has not taken.
                if !connection.channel.isWritable { connection.cutOff() }
            }
            try await writer.finish(nil)
        }
        var headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store", .vary: "Authorization"]
        headers[.accelBuffering] = "no"
        return Response(status: .ok, headers: headers, body: body)
    }

    /// `Last-Event-ID`, which a reconnecting EventSource sends: the last sequence number
    /// the client has.
    static func lastEventID(_ request: Request) throws(ValidationError) -> Int64? {
        guard let text = request.headers[.lastEventID] else { return nil }
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw ValidationError(field: "Last-Event-ID", "must be a change sequence number (an integer from 0), got \"\(text.prefix(40))\"")
        }
        return value
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
    /// Tells nginx not to buffer the stream.
    static let accelBuffering = Self("X-Accel-Buffering")!

    /// The change sequence number a snapshot is consistent with (`/v1/reports`, `/v1/export`).
    static let lastSeq = Self("X-Last-Seq")!
}
