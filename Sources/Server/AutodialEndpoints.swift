import Interchange
import ReportModel

/// The endpoints of autodial (`AutodialRoutes.swift`), in the table of `Endpoints.swift`:
/// supervisors' only, as calling a number is theirs to decide.
extension Endpoint {
    static let startAutodial = Endpoint(
        path: "/v1/phones/{number}/autodial",
        summary: "Start autodial on a number verified as `violator` (or blocked): the robot calls it at the rules' interval, in the lawful hours, with the city's message, until the campaign ends (a stop, the number found `not_violator`, every report carrying it `removed`, `rejected`, `cancelled` or `duplicate`, or the most days). A number not verified as the advertiser's, or with a campaign running, is a 409. A change `phone.autodial_started` in the feed and the number's history.",
        parameters: [phoneNumber], answers: ["application/json"], answerDescription: "The campaign.", answerSchema: "Campaign",
        method: .post, access: .role(.supervisor), requestBody: "PhoneNote", success: .created)
    static let stopAutodial = Endpoint(
        path: "/v1/phones/{number}/autodial/stop",
        summary: "Stop a number's running campaign (409 when none runs). A change `phone.autodial_stopped` in the feed and the number's history.",
        parameters: [phoneNumber], answers: ["application/json"], answerDescription: "The campaign, ended.", answerSchema: "Campaign",
        method: .post, access: .role(.supervisor), requestBody: "PhoneNote")
    static let campaigns = Endpoint(
        path: "/v1/phones/{number}/autodial",
        summary: "A number's autodial campaigns, newest first: when each started and ended, by whom, and why it ended.",
        parameters: [phoneNumber], answers: ["application/json"], answerDescription: "`{campaigns: [...]}`.", answerSchema: "Campaigns",
        access: .role(.supervisor))
    static let calls = Endpoint(
        path: "/v1/phones/{number}/calls",
        summary: "A number's calls, newest first, paged by cursor: when each was placed and ended, its SIP final code, whether it was answered, how many seconds of the message were played, and why it ended. `placing` is a call in progress; `interrupted`, one whose dialer stopped mid-call (it counts as placed).",
        parameters: [
            phoneNumber, limit(default: 50, max: AutodialRoutes.maxPage),
            Parameter(name: "before", description: "The cursor: only calls with ids below this one (the `next` link sets it).", schema: ["type": "integer", "minimum": 1]),
        ],
        answers: ["application/json"], answerDescription: "`{calls: [...], next}`.", answerSchema: "Calls", access: .role(.supervisor))
    static let autodialStats = Endpoint(
        path: "/v1/stats/autodial",
        summary: "Did autodial work? Each campaign, newest first, with its calls and answers, and the public reports carrying its number filed in two equal periods: before it started, and since (the period is the campaign's run, to its end or to now).",
        parameters: [
            limit(default: 50, max: AutodialRoutes.maxPage),
            Parameter(name: "before", description: "The cursor: only campaigns with ids below this one (the `next` link sets it).", schema: ["type": "integer", "minimum": 1]),
        ],
        answers: ["application/json"], answerDescription: "`{campaigns: [...], next}`.", answerSchema: "AutodialStats", access: .role(.supervisor))

    static let autodialEndpoints = [startAutodial, stopAutodial, campaigns, calls, autodialStats]
}

extension OpenAPI {
    static let autodialSchemas: [(String, JSONValue)] = {
        let date: JSONValue = ["type": "string", "format": "date-time"]
        let nullableDate: JSONValue = ["type": ["string", "null"], "format": "date-time"]
        let author = object([("id", ["type": ["integer", "null"]]), ("api_key", ["type": ["integer", "null"]])], required: [])
        let campaign = object([
            ("id", integer), ("number", ["type": "string", "pattern": "^[0-9]{8,15}$"]), ("active", ["type": "boolean"]),
            ("started_at", date), ("started_by", author), ("note", nullableString),
            ("ended_at", nullableDate), ("ended_by", ["oneOf": [author, ["type": "null"]]]),
            ("end_reason", ["type": ["string", "null"], "enum": .array(CampaignEnd.allCases.map { .string($0.rawValue) } + [.null])]),
            ("end_note", nullableString),
        ], required: ["id", "number", "active", "started_at", "started_by"])
        let call = object([
            ("id", integer), ("campaign_id", integer), ("placed_at", date), ("ended_at", nullableDate),
            ("outcome", ["type": "string", "enum": .array(CallOutcome.allCases.map { .string($0.rawValue) })]),
            ("answered", ["type": "boolean"]), ("sip_code", ["type": ["integer", "null"]]), ("seconds_played", ["type": "number", "minimum": 0]),
            ("reason", nullableString),
        ], required: ["id", "campaign_id", "placed_at", "outcome", "answered", "seconds_played"])
        let next: JSONValue = ["type": ["string", "null"]]
        return [
            ("Campaign", campaign),
            ("Campaigns", object([("campaigns", array(of: ref("Campaign")))])),
            ("Calls", object([("calls", array(of: call)), ("next", next)], required: ["calls"])),
            ("AutodialStats", object([
                ("campaigns", array(of: object([
                    ("campaign", ref("Campaign")), ("calls", count), ("answered", count), ("period_days", ["type": "number", "minimum": 0]),
                    ("reports_before", count), ("reports_after", count),
                ]))),
                ("next", next),
            ], required: ["campaigns"])),
        ]
    }()
}
