import Accounts
import Geometry
import Hummingbird
import Interchange
import ReportModel

/// A member of a request body: its name, what it must be (its OpenAPI schema), and
/// whether it is required.
struct BodyMember: Sendable {
    var name: String
    var schema: JSONValue
    var required: Bool

    init(_ name: String, _ schema: JSONValue, required: Bool = true) {
        (self.name, self.schema, self.required) = (name, schema, required)
    }
}

/// A JSON request body, declared once: its members give the members it accepts and its
/// OpenAPI schema (`/openapi.json`), and ``init(reading:)`` reads them, each bad one an
/// issue, so that one 422 names every bad field.
protocol RequestBody: Sendable {
    /// Its name among the document's schemas (`#/components/schemas/…`).
    static var schemaName: String { get }
    static var members: [BodyMember] { get }
    /// At least this many members must be sent (a patch: 1).
    static var minMembers: Int { get }

    /// The values of `body`; nil only when an issue is recorded on it.
    init?(reading body: inout JSONBody)
}

extension RequestBody {
    static var minMembers: Int { 0 }

    /// Exactly these members, no others; those required, and at least ``minMembers``.
    static var schema: JSONValue { OpenAPI.body(members, minMembers: minMembers) }

    /// The names of the members it accepts.
    static var names: [String] { members.map(\.name) }

    /// Reads the body of a request: 415 for another media type, 413 past the size, 400
    /// for what is no JSON object, a 422 naming every bad member.
    static func read(_ request: Request) async throws -> Self {
        var body = try await JSONBody.read(request, allowed: names)
        let value = Self(reading: &body)
        try body.finish()
        guard let value else { throw ValidationErrors([ValidationError(field: "body", "must be a \(schemaName) object")]) }
        return value
    }
}

// MARK: Accounts

/// `POST /v1/auth/register`.
struct Registration: RequestBody {
    static let schemaName = "Registration"
    static let members = [
        BodyMember("name", OpenAPI.personName),
        BodyMember("email", [
            "type": "string", "format": "email", "maxLength": 254,
            "description": "An email address, the account's login; one not registered yet (compared without case). One address is told an email is taken at most 3 times an hour, and one email is named by at most 3 registrations an hour; then 429.",
        ]),
        BodyMember("phone", [
            "type": "string", "format": "phone",
            "description": "A phone number in any written form, as on reports: contact only, never a login, and never refused for being on another account.",
        ]),
        BodyMember("password", ["type": "string", "minLength": 10, "maxLength": 128, "description": "10 to 128 characters, not among the most common passwords."]),
    ]
    var draft: AccountDraft

    init?(reading body: inout JSONBody) {
        let (name, email, phone, password) = (body.string("name"), body.string("email"), body.string("phone"), body.string("password"))
        var draft: AccountDraft?
        body.check { () throws(ValidationErrors) in
            draft = try AccountDraft(name: name ?? "", email: email ?? "", phone: phone ?? "", password: password ?? "")
        }
        guard let draft else { return nil }
        self.draft = draft
    }
}

/// `POST /v1/auth/login`.
struct Login: RequestBody {
    static let schemaName = "Login"
    static let members = [BodyMember("login", ["type": "string", "description": "The account's email (in any case)."]), BodyMember("password", OpenAPI.string)]
    var login, password: String

    init?(reading body: inout JSONBody) {
        let (login, password) = (body.string("login"), body.string("password"))
        guard let login, let password else { return nil }
        (self.login, self.password) = (login, password)
    }
}

/// `POST /v1/auth/refresh`.
struct Refresh: RequestBody {
    static let schemaName = "Refresh"
    static let members = [BodyMember("refresh_token", OpenAPI.string)]
    var token: String

    init?(reading body: inout JSONBody) {
        guard let token = body.string("refresh_token") else { return nil }
        self.token = token
    }
}

/// `PATCH /v1/me`.
struct MePatch: RequestBody {
    static let schemaName = "MePatch"
    static let members = [BodyMember("name", OpenAPI.personName)]
    var name: String

    init?(reading body: inout JSONBody) {
        guard let name = body.string("name") else { return nil }
        self.name = name
    }
}

/// `POST /v1/me/password`.
struct PasswordChange: RequestBody {
    static let schemaName = "PasswordChange"
    static let members = [
        BodyMember("old_password", OpenAPI.string),
        BodyMember("new_password", ["type": "string", "minLength": 10, "maxLength": 128, "description": "As at registration."]),
    ]
    var old, new: String

    init?(reading body: inout JSONBody) {
        let (old, new) = (body.string("old_password"), body.string("new_password"))
        guard let old, let new else { return nil }
        (self.old, self.new) = (old, new)
    }
}

/// `PATCH /v1/users/{id}`: a role, the account disabled or enabled, or both.
struct UserPatch: RequestBody {
    static let schemaName = "UserPatch"
    static let members = [BodyMember("role", OpenAPI.role, required: false), BodyMember("disabled", ["type": "boolean"], required: false)]
    static let minMembers = 1
    var role: Role?
    var disabled: Bool?

    init?(reading body: inout JSONBody) {
        let roleText = body.string("role", required: false)
        disabled = body.bool("disabled")
        if let roleText {
            do throws(ValidationError) { role = try Role(person: roleText) } catch { body.add(error) }
        }
        if roleText == nil && disabled == nil && body.issues.isEmpty { body.add(ValidationError(field: "role", "give role, disabled or both")) }
        guard body.issues.isEmpty else { return nil }
    }
}

// MARK: Reports

/// `POST /v1/reports/{id}/transitions`.
struct Transition: RequestBody {
    static let schemaName = "Transition"
    static let members = [
        BodyMember("to", ["type": "string", "description": "The status to move to (see /v1/statuses and the transition table)."]),
        BodyMember("note", ["type": "string", "maxLength": 2000, "pattern": .string(OpenAPI.linesText), "description": "Required to reject."], required: false),
        BodyMember("duplicate_of", ["type": "integer", "minimum": 1, "description": "Required to mark a duplicate: the report this one repeats."], required: false),
    ]
    var to: String
    var note: String?
    var duplicateOf: Int64?

    init?(reading body: inout JSONBody) {
        let (to, note, duplicateOf) = (body.string("to"), body.string("note", required: false), body.integer("duplicate_of"))
        guard let to else { return nil }
        (self.to, self.note, self.duplicateOf) = (to, note, duplicateOf)
    }
}

/// `POST /v1/reports/{id}/hide`: why, required.
struct Hide: RequestBody {
    static let schemaName = "Hide"
    static let members = [BodyMember("note", ["type": "string", "minLength": 1, "maxLength": 2000, "pattern": .string(OpenAPI.linesText), "description": "Why (spam, abuse, a mistake)."])]
    var note: String

    init?(reading body: inout JSONBody) {
        guard let note = body.string("note") else { return nil }
        self.note = note
    }
}

/// `POST /v1/reports/{id}/unhide`, and a phone's block or unblock: an optional note.
struct Note<Name: BodyName>: RequestBody {
    static var schemaName: String { Name.schemaName }
    static var members: [BodyMember] {
        [BodyMember("note", ["type": ["string", "null"], "maxLength": 2000, "pattern": .string(OpenAPI.linesText)], required: false)]
    }
    var note: String?

    init?(reading body: inout JSONBody) {
        note = body.string("note", required: false)
    }
}

/// The schema's name of a body that is only an optional note (null or absent: none).
protocol BodyName: Sendable {
    static var schemaName: String { get }
}

enum UnhideNote: BodyName {
    static let schemaName = "Unhide"
}

enum PhoneNote: BodyName {
    static let schemaName = "PhoneNote"
}

/// `POST /v1/me/notifications/read`.
struct ReadUpTo: RequestBody {
    static let schemaName = "ReadUpTo"
    static let members = [
        BodyMember("up_to", ["type": "integer", "minimum": 0, "maximum": .int(JSONBody.maxInteger), "description": "The id of the newest notification read."]),
    ]
    var upTo: Int64

    init?(reading body: inout JSONBody) {
        let upTo = body.integer("up_to")
        guard body.issues.isEmpty else { return nil }
        guard let upTo, upTo >= 0 else {
            body.add(ValidationError(field: "up_to", "is required: the id of the newest notification read (an integer from 0)"))
            return nil
        }
        self.upTo = upTo
    }
}

// MARK: Assignments

/// `POST /v1/reports/{id}/assignment`.
struct AssignmentRequest: RequestBody {
    static let schemaName = "AssignmentRequest"
    static let members = [
        BodyMember("user_id", ["type": "integer", "minimum": 1, "maximum": .int(JSONBody.maxInteger), "description": "The account that goes to check: an enabled inspector or supervisor (an inspector may name only themselves)."]),
        BodyMember("note", ["type": ["string", "null"], "maxLength": 2000, "pattern": .string(OpenAPI.linesText), "description": "What to check."], required: false),
    ]
    var userID: Int64
    var note: String?

    init?(reading body: inout JSONBody) {
        let (user, note) = (body.id("user_id"), body.string("note", required: false))
        guard let user else { return nil }
        (userID, self.note) = (user, note)
    }
}

/// `POST /v1/assignments`: many reports to one account, all or none.
struct BulkAssignment: RequestBody {
    static let schemaName = "BulkAssignment"
    static let members = [
        BodyMember("report_ids", [
            "type": "array", "minItems": 1, "maxItems": .int(Assignment.maxBulk), "uniqueItems": true,
            "items": ["type": "integer", "minimum": 1, "maximum": .int(JSONBody.maxInteger)],
            "description": "The reports, each once: open public ones.",
        ]),
        AssignmentRequest.members[0],
        AssignmentRequest.members[1],
    ]
    var reportIDs: [Int64]
    var userID: Int64
    var note: String?

    init?(reading body: inout JSONBody) {
        let (ids, user, note) = (body.ids("report_ids"), body.id("user_id"), body.string("note", required: false))
        if let ids {
            if ids.isEmpty || ids.count > Assignment.maxBulk { body.add(ValidationError(field: "report_ids", "must list 1 to \(Assignment.maxBulk) reports")) }
            if Set(ids).count != ids.count { body.add(ValidationError(field: "report_ids", "must list each report once")) }
        }
        guard let ids, let user, body.issues.isEmpty else { return nil }
        (reportIDs, userID, self.note) = (ids, user, note)
    }
}

/// `PATCH /v1/me/assignments`: the caller's list in a new order.
struct AssignmentOrder: RequestBody {
    static let schemaName = "AssignmentOrder"
    static let members = [
        BodyMember("order", [
            "type": "array", "maxItems": .int(Assignment.maxPerAccount), "uniqueItems": true,
            "items": ["type": "integer", "minimum": 1, "maximum": .int(JSONBody.maxInteger)],
            "description": "Every report of the caller's list, each once, first to last (another set is a 409: read the list again).",
        ]),
    ]
    var order: [Int64]

    init?(reading body: inout JSONBody) {
        guard let order = body.ids("order") else { return nil }
        guard order.count <= Assignment.maxPerAccount else {
            body.add(ValidationError(field: "order", "must list at most \(Assignment.maxPerAccount) reports"))
            return nil
        }
        self.order = order
    }
}

// MARK: Phones

/// `POST /v1/phones/{number}/verification`.
struct Verification: RequestBody {
    static let schemaName = "Verification"
    static let members = [
        BodyMember("outcome", ["type": "string", "enum": .array(PhoneStatus.outcomes.map { .string($0.rawValue) })]),
        BodyMember("note", ["type": ["string", "null"], "maxLength": 2000, "pattern": .string(OpenAPI.linesText)], required: false),
    ]
    var outcome: PhoneStatus
    var note: String?

    init?(reading body: inout JSONBody) {
        let (outcome, note) = (body.string("outcome"), body.string("note", required: false))
        var status: PhoneStatus?
        if let outcome { body.check { () throws(ValidationErrors) in status = try ValidationErrors.wrap { () throws(ValidationError) in try PhoneStatus(outcome: outcome) } } }
        guard let status else { return nil }
        (self.outcome, self.note) = (status, note)
    }
}

// MARK: Webhooks

/// `POST /v1/webhooks`.
struct WebhookRegistration: RequestBody {
    static let schemaName = "WebhookRegistration"
    static let members = [
        BodyMember("url", OpenAPI.webhookURL), BodyMember("events", OpenAPI.webhookEvents),
        BodyMember("description", OpenAPI.webhookDescription, required: false),
    ]
    var draft: WebhookDraft

    /// The description; null clears it.
    static func description(_ body: inout JSONBody) -> String? {
        body.isNull("description") ? "" : body.string("description", required: false)
    }

    init?(reading body: inout JSONBody) {
        let (url, events, description) = (body.string("url", required: false), body.strings("events", required: false), Self.description(&body))
        let draft: WebhookDraft
        do throws(ValidationErrors) { draft = try WebhookDraft(url: url, events: events, description: description) } catch {
            for issue in error.issues { body.add(issue) }
            return nil
        }
        self.draft = draft
    }
}

/// `PATCH /v1/webhooks/{id}`.
struct WebhookChange: RequestBody {
    static let schemaName = "WebhookPatch"
    static let members = WebhookRegistration.members.map { BodyMember($0.name, $0.schema, required: false) }
        + [BodyMember("enabled", ["type": "boolean"], required: false)]
    static let minMembers = 1
    var patch: WebhookPatch

    init?(reading body: inout JSONBody) {
        for name in ["url", "events", "enabled"] where body.isNull(name) { body.add(ValidationError(field: name, "may not be null")) }
        let (url, events, description, enabled) = (
            body.string("url", required: false), body.strings("events", required: false), WebhookRegistration.description(&body), body.bool("enabled")
        )
        let patch: WebhookPatch
        do throws(ValidationErrors) { patch = try WebhookPatch(url: url, events: events, description: description, enabled: enabled) } catch {
            for issue in error.issues { body.add(issue) }
            return nil
        }
        self.patch = patch
    }
}
