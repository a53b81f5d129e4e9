import Interchange
import ReportModel

/// The endpoints of assignments (`AssignmentRoutes.swift`), in the table of `Endpoints.swift`:
/// who goes to check a report on site. Supervisors assign; an inspector takes an
/// unassigned report for themselves, gives back their own and orders their list. The
/// public never sees who is assigned.
extension Endpoint {
    static let assign: Endpoint = {
        var endpoint = Endpoint(
            path: "/v1/reports/{id}/assignment",
            summary: "Assign an open public report to an enabled inspector or supervisor (`user_id`): supervisors to anyone, reassigning it if someone has it; an inspector only to themselves, and only an unassigned report (409 otherwise). The assignee's own already: a 200 with the assignment as it is, nothing written. A history row and a change `report.assigned` (the feed, webhooks), and a notification to the assignee.",
            parameters: [reportID], answers: ["application/json"], answerDescription: "The assignment.", answerSchema: "Assignment",
            method: .post, access: .role(.inspector), requestBody: "AssignmentRequest", success: .created)
        endpoint.alreadyThere = "The assignee's own already: the assignment as it is, nothing written."
        return endpoint
    }()
    static let unassign = Endpoint(
        path: "/v1/reports/{id}/assignment",
        summary: "End a report's assignment: supervisors any, an inspector their own (nobody assigned: 409). A history row and a change `report.unassigned`; the assignment is kept, ended. A report that closes, is hidden or deleted ends its assignment by itself.",
        parameters: [reportID], answers: ["application/json"], answerDescription: "The assignment, ended.", answerSchema: "Assignment",
        method: .delete, access: .role(.inspector))
    static let reportAssignments = Endpoint(
        path: "/v1/reports/{id}/assignments",
        summary: "A report's assignments, newest first, ended ones too (the newest \(Assignment.maxOfReport)): who, since when, by whom, the notes (supervisors).",
        parameters: [reportID], answers: ["application/json"], answerDescription: "`{assignments: [...]}`.", answerSchema: "Assignments",
        access: .role(.supervisor))
    static let bulkAssign = Endpoint(
        path: "/v1/assignments",
        summary: "Assign many reports (up to \(Assignment.maxBulk), each once) to one account, all or none: a report that does not exist, is hidden or closed is a 422 naming it (`report_ids[i]`), and nothing is written. Reports the account has already stay as they are (supervisors).",
        parameters: [],
        answers: ["application/json"], answerDescription: "`{assignments: [...]}`, in the order of `report_ids`.", answerSchema: "Assignments",
        method: .post, access: .role(.supervisor), requestBody: "BulkAssignment")
    static let myAssignments = Endpoint(
        path: "/v1/me/assignments",
        summary: "The caller's reports to check, in their order: each with the report as a Feature (its status now, its photos' URLs) and its `etag` for `If-Match` when the report is updated later (from the street, offline: a report changed meanwhile is a 412). `X-Last-Seq`: follow `/v1/changes?since=` from it for the changes to these reports, `report.assigned` and `report.unassigned` among them.",
        parameters: [],
        answers: ["application/json"], answerDescription: "`{assignments: [{position, assigned_at, note, etag, report}], last_seq}`.",
        answerSchema: "MyAssignments", access: .role(.inspector))
    static let reorderAssignments = Endpoint(
        path: "/v1/me/assignments",
        summary: "Put the caller's list in a new order: `order` lists every report of it once, first to last (another set, as after an assignment made meanwhile, is a 409: read the list again).",
        parameters: [],
        answers: ["application/json"], answerDescription: "The list, as `GET` gives it.", answerSchema: "MyAssignments",
        method: .patch, access: .role(.inspector), requestBody: "AssignmentOrder")
    static let assignees = Endpoint(
        path: "/v1/assignees",
        summary: "Whom reports may be assigned to: the enabled inspectors and supervisors, with how many reports each has to check; then, with `can_check` false, the accounts that still hold reports but can no longer check them (disabled, or made administrators), so that a supervisor reassigns those (supervisors; names only).",
        parameters: [],
        answers: ["application/json"], answerDescription: "`{assignees: [{id, name, role, assigned, can_check}]}`.", answerSchema: "Assignees",
        access: .role(.supervisor))

    static let assignmentEndpoints = [assign, unassign, reportAssignments, bulkAssign, myAssignments, reorderAssignments, assignees]
}

extension OpenAPI {
    static let assignmentSchemas: [(String, JSONValue)] = {
        let date: JSONValue = ["type": "string", "format": "date-time"]
        let author = object([("id", ["type": ["integer", "null"]]), ("api_key", ["type": ["integer", "null"]])], required: [])
        let assignment = object([
            ("id", integer), ("report_id", integer), ("user", object([("id", integer), ("name", nullableString)])),
            ("position", integer), ("active", ["type": "boolean"]), ("assigned_at", date), ("assigned_by", author), ("note", nullableString),
            ("ended_at", ["type": ["string", "null"], "format": "date-time"]), ("ended_by", ["oneOf": [author, ["type": "null"]]]), ("end_note", nullableString),
        ], required: ["id", "report_id", "user", "position", "active", "assigned_at", "assigned_by"])
        return [
            ("Assignment", assignment),
            ("Assignments", object([("assignments", array(of: ref("Assignment")))])),
            ("MyAssignments", object([
                ("assignments", array(of: object([
                    ("position", integer), ("assigned_at", date), ("note", nullableString), ("etag", string), ("report", ["type": "object"]),
                ]))),
                ("last_seq", ["type": "integer", "minimum": 0]),
            ])),
            ("Assignees", object([
                ("assignees", array(of: object([
                    ("id", integer), ("name", string), ("role", ["enum": ["inspector", "supervisor", "admin"]]), ("assigned", count), ("can_check", ["type": "boolean"]),
                ]))),
            ])),
        ]
    }()
}
