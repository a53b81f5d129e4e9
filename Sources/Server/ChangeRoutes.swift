import ChangeFeed
import HTTPTypes
import Hummingbird

/// `GET /v1/changes`: the numbered writes since a sequence number, for offline apps and
/// other systems that keep a copy of the data.
struct ChangeRoutes {
    let feed: ChangeFeed

    func register(on router: Router<AppRequestContext>) {
        router.read(.changes) { _, query, context in
            let since = try query.integer("since", in: 0...Int(Int64.max), default: 0)!
            let limit = try query.integer("limit", in: 1...ChangeFeed.maxPage, default: 100, clampedTo: ChangeFeed.maxPage)!
            let staff = context.caller?.isStaff == true
            let page = try feed.page(since: Int64(since), limit: limit, staff: staff)
            var response = Responses.body(try ChangeJSON.page(page, staff: staff), type: "application/json")
            response.headers[.vary] = "Authorization"
            if staff { response.headers[.cacheControl] = "private, no-store" }
            return response
        }
    }
}

extension HTTPField.Name {
    /// The change sequence number a snapshot is consistent with (`/v1/reports`, `/v1/export`).
    static let lastSeq = Self("X-Last-Seq")!
}
