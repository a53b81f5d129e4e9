import Accounts
import ReportModel
import ReportService

/// The endpoints of phone numbers (`PhoneRoutes.swift`), in the table of `Endpoints.swift`.
extension Endpoint {
    static let phoneNumber = Parameter(
        name: "number", location: .path, required: true,
        description: "A phone number in any written form: `0671234567`, `+380671234567`, `(067)123-45-67`, `067%20123%2045%2067`.",
        schema: ["type": "string", "maxLength": .int(Phone.maxInputLength), "pattern": .string(Patterns.phone), "example": "0671234567"])
    static let phone = Endpoint(
        path: "/v1/phones/{number}",
        summary: "A number's record: its status (unverified, violator, not_violator, unreachable, blocked), its public reports (all, open, per status), when it was first and last seen, the districts of its reports, the violator names written on them, and the history of its status (the newest \(PhoneRecord.maxHistory) changes). Supervisors see who made each change and its note.",
        parameters: [phoneNumber], answers: ["application/json"], answerDescription: "The record; a number no report carries and nobody verified is a 404.",
        answerSchema: "PhoneRecord")
    static let phoneReports = Endpoint(
        path: "/v1/phones/{number}/reports", summary: "The public reports that carry a number, in id order, paged by cursor like /v1/reports.",
        parameters: [phoneNumber, clampedLimit(default: 100, max: PhoneRoutes.maxPage), after],
        answers: ["application/geo+json"], answerDescription: "A FeatureCollection with `numberMatched`, `numberReturned` and a `next` link until the last page.",
        answerSchema: "ReportCollection")
    static let verifyPhone = Endpoint(
        path: "/v1/phones/{number}/verification",
        summary: "Record what a supervisor found out about a number: `violator` (it is the advertiser's), `not_violator` or `unreachable`. A blocked number is unblocked first (409).",
        parameters: [phoneNumber], answers: ["application/json"], answerDescription: "The number's record as it is now.",
        answerSchema: "PhoneRecord", method: .post, access: .role(.supervisor), requestBody: "Verification")
    static let blockPhone = Endpoint(
        path: "/v1/phones/{number}/block",
        summary: "Block a number verified as `violator` (otherwise a 409 saying why). In the same transaction every `confirmed` report whose numbers are now all blocked moves to `phone_blocked`, each with a history row naming the block.",
        parameters: [phoneNumber], answers: ["application/json"], answerDescription: "The number's record, with `moved_reports`: the reports the block moved.",
        answerSchema: "PhoneRecord", method: .post, access: .role(.supervisor), requestBody: "PhoneNote")
    static let unblockPhone = Endpoint(
        path: "/v1/phones/{number}/unblock",
        summary: "Unblock a number (it stays `violator`). The reports its blocks moved to `phone_blocked` go back to `confirmed`, except those a supervisor has moved since.",
        parameters: [phoneNumber], answers: ["application/json"], answerDescription: "The number's record, with `moved_reports`: the reports moved back.",
        answerSchema: "PhoneRecord", method: .post, access: .role(.supervisor), requestBody: "PhoneNote")
    static let blocklist = Endpoint(
        path: "/v1/blocklist",
        summary: "Every number blocked now, in number order, with when it was blocked and its public report count: what the operators' call-blocking systems load. A strong `ETag` of the body: `If-None-Match` answers 304 until a number is blocked or unblocked or a blocked number's report count changes.",
        parameters: [Parameter(name: "format", description: "json or csv (`number,blocked_at,report_count`, numbers with their +).",
                               schema: ["type": "string", "enum": ["json", "csv"], "default": "json"])],
        answers: ["application/json", "text/csv"], answerDescription: "The list.", answerSchema: "Blocklist",
        access: .anyOf([.integration, .supervisor]))
    static let blocklistChanges = Endpoint(
        path: "/v1/blocklist/changes",
        summary: "The numbers blocked and unblocked since a sequence number (each by its last change), and `last_seq`, the `since` of the next call: an operator's system syncs every minute without fetching the whole list. Start with `since=0`, or from the `last_seq` of the feed. A `since` older than the changes kept, or past the last, is a 410: fetch /v1/blocklist again.",
        parameters: [Parameter(name: "since", required: true, description: "The `last_seq` of the previous call (0: from the start).",
                               schema: ["type": "integer", "minimum": 0, "maximum": 9_223_372_036_854_775_807])],
        answers: ["application/json"], answerDescription: "`{added: [{number, blocked_at, report_count}], removed: [number], last_seq}`.",
        answerSchema: "BlocklistChanges", access: .anyOf([.integration, .supervisor]))
    static let phoneRanking = Endpoint(
        path: "/v1/stats/phones",
        summary: "Numbers ranked by how many public reports carry them in an area and period, most first (equal counts in number order), with their counts per status and whether each is blocked: which numbers to verify next.",
        parameters: [
            bbox, datetime, status,
            Parameter(name: "district", description: "Only reports of this district (a code of /v1/districts).", schema: ["type": "string"], namesDistrict: true),
            limit(default: 50, max: ReportService.maxRanking),
        ],
        answers: ["application/json"], answerDescription: "`{phones: [{number, reports, by_status, status, blocked}]}`.", answerSchema: "PhoneRanking",
        access: .role(.supervisor))
    static let stats = Endpoint(
        path: "/v1/stats", summary: "Public reports in an area and period counted by status, district and object type (every code, in the order of /v1/statuses, /v1/districts and /v1/object-types) and by month of filing (UTC): a dashboard.",
        parameters: [bbox, datetime], answers: ["application/json"],
        answerDescription: "`{total, by_status: [{code, count}], by_district, by_object_type, by_month: [{month: \"YYYY-MM\", count}]}`.", answerSchema: "Stats")
    static let about = Endpoint(
        path: "/v1/about",
        summary: "What the service is for, the legal basis for removing illegal outdoor advertising in Kyiv, how a report is handled (its statuses in order), contacts (Ukrainian and English, from the server's editable about file), the software version and the data's counts now.",
        parameters: [], answers: ["application/json"], answerDescription: "`{uk, en, statuses, version, counts}`; `uk` and `en` are null when the server has no about file.",
        answerSchema: "About")
}
