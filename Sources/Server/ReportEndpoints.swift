import Accounts
import ChangeFeed
import ReportModel
import ReportService

/// The endpoints that file and work reports (`ReportWriteRoutes.swift`), in the table of
/// `Endpoints.swift`.
extension Endpoint {
    static let fileReport = Endpoint(
        path: "/v1/reports",
        summary: "File a report: a GeoJSON Feature with a Point, or a flat object with `longitude` and `latitude`. The server assigns the id, the status `new`, the times and the filer. With an `Idempotency-Key` header, a retry of the same body replays the first answer and files nothing; the same key with another body is a 422, and while the first request runs, a 409. Keys are kept 48 hours.",
        parameters: [], answers: ["application/geo+json"],
        answerDescription: "The report as a Feature, with `Location` and `ETag`, and `possible_duplicates`: open reports within 50 m or sharing a phone, nearest first, at most 5.",
        answerSchema: "FiledReport", method: .post, access: .role(.inspector), requestBody: "NewReport", success: .created)
    static let nearby = Endpoint(
        path: "/v1/reports/nearby", summary: "Open reports near a place, before filing one there (the hints a filing would answer).",
        parameters: [
            Parameter(name: "lon", required: true, description: "Longitude, -180 to 180.", schema: ["type": "number", "minimum": -180, "maximum": 180, "example": .number(30.52)]),
            Parameter(name: "lat", required: true, description: "Latitude, -90 to 90.", schema: ["type": "number", "minimum": -90, "maximum": 90, "example": .number(50.45)]),
            Parameter(name: "radius", description: "Metres, 1 to 1000.", schema: ["type": "number", "minimum": 1, "maximum": 1000, "default": 50]),
        ],
        answers: ["application/json"], answerDescription: "`{possible_duplicates: [{id, distance_m, shared_phones}]}`, nearest first, at most 5.",
        answerSchema: "Nearby")
    static let myReports = Endpoint(
        path: "/v1/me/reports", summary: "The caller's own reports with their statuses, newest first, paged by cursor.",
        parameters: [
            limit(default: 50, max: 500),
            Parameter(name: "before", description: "The cursor: only reports with ids below this one (the `next` link sets it).",
                      schema: ["type": "integer", "minimum": 1, "maximum": .int(Int(ReportLimits.maxID))]),
        ],
        answers: ["application/geo+json"], answerDescription: "A FeatureCollection with `numberReturned` and a `next` link until the last page.",
        answerSchema: "ReportCollection", access: .role(.inspector))
    static let editReport = Endpoint(
        path: "/v1/reports/{id}",
        summary: "Edit a report's fields (JSON merge patch; null removes `violator` or `comment`). The filer may while it is `new`, supervisors at any time; the status changes only by a transition. `If-Match` with the report's ETag is required (428 without it, 412 when stale).",
        parameters: [reportID], answers: ["application/geo+json"], answerDescription: "The report as it is now, with its new `ETag`.",
        answerSchema: "Report", method: .patch, access: .role(.inspector), requestBody: "ReportPatch")
    static let transition = Endpoint(
        path: "/v1/reports/{id}/transitions",
        summary: "Move a report to another status by the transition table (docs/api.md): a step the status does not allow is a 409 naming the allowed ones, a role the step does not name a 403, a missing note or a bad `duplicate_of` a 422. `If-Match` is honoured when given.",
        parameters: [reportID], answers: ["application/geo+json"], answerDescription: "The report as it is now.",
        answerSchema: "Report", method: .post, access: .role(.inspector), requestBody: "Transition")
    static let hideReport = Endpoint(
        path: "/v1/reports/{id}/hide",
        summary: "Hide a report from every public answer (clusters, tiles, search, exports, OGC, reports); supervisors still see it, nothing is deleted.",
        parameters: [reportID], answers: ["application/geo+json"], answerDescription: "The report, marked `hidden`.",
        answerSchema: "Report", method: .post, access: .role(.supervisor), requestBody: "Hide")
    static let unhideReport = Endpoint(
        path: "/v1/reports/{id}/unhide", summary: "Bring a hidden report back.",
        parameters: [reportID], answers: ["application/geo+json"], answerDescription: "The report.",
        answerSchema: "Report", method: .post, access: .role(.supervisor), requestBody: "Unhide")
    static let history = Endpoint(
        path: "/v1/reports/{id}/history",
        summary: "What happened to a report and when. Supervisors see every change, who made it, fields before and after, notes; others see the status changes and their times.",
        parameters: [
            reportID, limit(default: HistoryPage.maxLimit, max: HistoryPage.maxLimit),
            Parameter(name: "after", description: "The cursor: only entries after this one (`next` of the previous page; 0 from the start).",
                      schema: ["type": "integer", "minimum": 0, "maximum": .int(Int(Int64.max)), "default": 0]),
        ],
        answers: ["application/json"], answerDescription: "`{history: [...], next}`, oldest first; `next` (the `after` of the next page) while there may be more.",
        answerSchema: "History")
    static let changes = Endpoint(
        path: "/v1/changes",
        summary: "The writes since a sequence number, oldest first: to keep a copy of the data. Start from a snapshot (`/v1/export` or `/v1/reports` pages, whose `X-Last-Seq` header is the number to start from), then apply each entry in order: one with a `report` replaces the copy's report of that id, one without removes it. An entry carries the report as it is now, so applying one twice changes nothing. Hidden and deleted reports, and phones' changes (`phone.verified`, `phone.blocked`, `phone.unblocked`, with `id` 0), are bare `{seq, type, id}` for the public; staff see a phone's change with `at`, `phone`, its `status` now and `change` (who, from and to, the note, how many reports it moved); supervisors and administrators see them whole, with `hidden` and, for every entry, `change`: who made it and what it did. A `since` older than what is kept, or past the last change (a database restored from an older backup), is a 410: start again from a snapshot (retention: `serve --changes-retention-days`; by default everything is kept).",
        parameters: [
            Parameter(name: "since", description: "The last sequence number the client has (0: from the start).",
                      schema: ["type": "integer", "minimum": 0, "maximum": .int(Int(Int64.max)), "default": 0]),
            clampedLimit(default: 100, max: ChangeFeed.maxPage),
        ],
        answers: ["application/json"],
        answerDescription: "`{changes: [{seq, type, id, at?, report?, hidden?, change?}], last_seq}`: pass `last_seq` as the next `since`; fewer than `limit` entries means the client is up to date.",
        answerSchema: "Changes")
    static let changesStream = Endpoint(
        path: "/v1/changes/stream",
        summary: "The changes as Server-Sent Events, as they are committed (also those of other processes on the database, within a second): each event's `id` is its sequence number, its `event` the type, its `data` the entry as `/v1/changes` gives it. A reconnecting client sends `Last-Event-ID` and resumes exactly after it; without it, `since` says where to start, and without either the stream starts now. A comment every 15 s keeps it open. A client that falls 1,024 reads of the table behind (about 20 s) is disconnected (it reconnects and resumes). With `bbox`, only changes of reports in the box, and every tombstone.",
        parameters: [
            Parameter(name: "since", description: "The last sequence number the client has (default: now). `Last-Event-ID` overrides it.",
                      schema: ["type": "integer", "minimum": 0, "maximum": .int(Int(Int64.max))]),
            bbox,
        ],
        answers: ["text/event-stream"], answerDescription: "An event stream that does not end on its own.")
    static let myNotifications = Endpoint(
        path: "/v1/me/notifications",
        summary: "The status changes of the caller's own reports (those a supervisor or the system made, not the caller's own; hidden reports left out), and the reports assigned to the caller to check or taken from them (`type` `report.assigned`, `report.unassigned`), newest first, each with the new status and the note, marked read or unread.",
        parameters: [
            limit(default: 50, max: NotificationRoutes.maxPage),
            Parameter(name: "before", description: "The cursor: only notifications with ids below this one (`next` of the previous page).",
                      schema: ["type": "integer", "minimum": 1, "maximum": .int(Int(Int64.max))]),
            Parameter(name: "unread", description: "`true`: only the unread ones.", schema: ["type": "string", "enum": ["true", "false"], "default": "false"]),
        ],
        answers: ["application/json"], answerDescription: "`{notifications: [{id, report_id, type, at, from_status, to_status, note, read}], unread_count, next}`.",
        answerSchema: "Notifications", access: .role(.inspector))
    static let readNotifications = Endpoint(
        path: "/v1/me/notifications/read",
        summary: "Marks the caller's notifications read up to an id (a mark never moves back).",
        parameters: [], answers: ["application/json"], answerDescription: "`{read_up_to, unread_count}`.",
        answerSchema: "ReadMark", method: .post, access: .role(.inspector), requestBody: "ReadUpTo")
}
