import Accounts
import Geometry
import Hummingbird
import Interchange
import Offloading
import ReportModel
import ReportService

/// `GET /v1/me/notifications` and `POST /v1/me/notifications/read`: the status changes of
/// the caller's own reports, and how far the caller has read them.
struct NotificationRoutes {
    let service: ReportService

    static let maxPage = 200

    func register(on router: Router<AppRequestContext>) {
        router.handle(.myNotifications) { _, query, _, identity in
            let account = try Self.account(identity)
            let limit = try query.integer("limit", in: 1...Self.maxPage, default: 50)!
            let before = try query.integer("before", in: 1...Int(Int64.max)).map(Int64.init)
            let unreadOnly = try Self.flag(query, "unread")
            let (found, unread) = try await service.notifications(of: account, before: before, limit: limit, unreadOnly: unreadOnly)
            let page = Notifications(
                notifications: found.map(Notifications.Item.init), unreadCount: unread,
                next: found.count == limit ? found.last.map(\.seq) : nil)
            var response = try Responses.json(page)
            response.headers[.cacheControl] = "private, no-store"
            return response
        }
        router.handle(.readNotifications) { request, _, _, identity in
            let account = try Self.account(identity)
            let mark = try await service.markNotificationsRead(of: account, upTo: try await ReadUpTo.read(request).upTo)
            return try Responses.private(ReadMark(readUpTo: mark.readUpTo, unreadCount: mark.unread))
        }
    }

    /// Notifications belong to people: an API key has none.
    static func account(_ identity: AccountService.Identity) throws -> Int64 {
        guard let account = identity.caller.author.accountID else { throw Forbidden(reason: "notifications belong to a person's account, not to an API key") }
        return account
    }

    static func flag(_ query: QueryParameters, _ name: String) throws(ValidationError) -> Bool {
        switch query[name] {
        case nil, "false": return false
        case "true": return true
        case let text?: throw ValidationError(field: name, "must be true or false, got \"\(text.prefix(40))\"")
        }
    }

    struct Notifications: Encodable {
        struct Item: Encodable {
            var id: Int64
            var reportID: Int64
            var type: String
            var at: String
            var fromStatus: String?
            var toStatus: String?
            var note: String?
            var read: Bool

            init(_ n: StatusNotification) {
                id = n.seq
                reportID = n.reportID
                type = ChangeType(n.action).rawValue
                at = RFC3339.string(from: n.at)
                fromStatus = n.fromStatus
                toStatus = n.toStatus
                note = n.note
                read = n.read
            }

            enum CodingKeys: String, CodingKey {
                case id, reportID = "report_id", type, at, fromStatus = "from_status", toStatus = "to_status", note, read
            }
        }

        var notifications: [Item]
        var unreadCount: Int
        /// The cursor of the next page (`before`), nil on the last.
        var next: Int64?

        enum CodingKeys: String, CodingKey { case notifications, unreadCount = "unread_count", next }
    }

    struct ReadMark: Encodable {
        var readUpTo: Int64
        var unreadCount: Int
        enum CodingKeys: String, CodingKey { case readUpTo = "read_up_to", unreadCount = "unread_count" }
    }
}
