import Foundation
import Geometry

/// An endpoint that receives changes: where, which types, and whether it still does.
/// Its secret is not here: it is shown once, when the endpoint is registered
/// (``RegisteredWebhook``), and read only by the dispatcher.
public struct Webhook: Sendable, Hashable {
    public var id: Int64
    public var url: String
    /// The change types it receives, in the feed's order.
    public var events: [ChangeType]
    public var description: String
    public var enabled: Bool
    /// Why it was disabled (by an administrator, or by a 410 Gone), when it is.
    public var disabledReason: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: Int64, url: String, events: [ChangeType], description: String, enabled: Bool, disabledReason: String? = nil, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.url = url
        self.events = events
        self.description = description
        self.enabled = enabled
        self.disabledReason = disabledReason
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A webhook just registered, with the one time its secret is shown.
public struct RegisteredWebhook: Sendable {
    public var webhook: Webhook
    /// `whsec_` and the key in base64, as Standard Webhooks libraries take it.
    public var secret: String

    public init(webhook: Webhook, secret: String) {
        self.webhook = webhook
        self.secret = secret
    }
}

/// What registering an endpoint takes: the checked URL, types and description.
public struct WebhookDraft: Sendable, Hashable {
    public var url: String
    public var events: [ChangeType]
    public var description: String

    /// Checks every field and reports every issue at once.
    public init(url: String?, events: [String]?, description: String?) throws(ValidationErrors) {
        var issues: [ValidationError] = []
        let url = Self.check(url: url, into: &issues)
        let events = Self.check(events: events, into: &issues)
        let description = Self.check(description: description ?? "", into: &issues)
        guard issues.isEmpty, let url, let events, let description else { throw ValidationErrors(issues) }
        (self.url, self.events, self.description) = (url, events, description)
    }

    public static let maxURLLength = 2_048
    public static let maxDescriptionLength = 500

    /// An absolute http or https URL with a host and no user name or password (a
    /// credential in a URL ends up in logs); at most 2,048 characters.
    static func check(url text: String?, into issues: inout [ValidationError]) -> String? {
        guard let text else {
            issues.append(ValidationError(field: "url", "is required"))
            return nil
        }
        let rule = "must be an absolute http or https URL with a host, no user name or password and no fragment, at most \(maxURLLength) characters"
        guard text.utf8.count <= maxURLLength, !text.contains(where: { $0.isWhitespace }),
              let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              components.user == nil, components.password == nil, components.fragment == nil
        else {
            issues.append(ValidationError(field: "url", rule))
            return nil
        }
        return text
    }

    /// One or more known change types, each once.
    static func check(events names: [String]?, into issues: inout [ValidationError]) -> [ChangeType]? {
        let known = ChangeType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let names, !names.isEmpty else {
            issues.append(ValidationError(field: "events", "is required: one or more of \(known)"))
            return nil
        }
        var unknown: [ValidationError] = []
        for (i, name) in names.enumerated() where ChangeType(rawValue: name) == nil {
            unknown.append(ValidationError(field: "events[\(i)]", "must be one of \(known), got \"\(name.prefix(40))\""))
        }
        if names.count != Set(names).count { unknown.append(ValidationError(field: "events", "must name each type once")) }
        guard unknown.isEmpty else {
            issues += unknown
            return nil
        }
        let chosen = Set(names)
        return ChangeType.allCases.filter { chosen.contains($0.rawValue) }
    }

    /// At most 500 characters, no control characters.
    static func check(description text: String, into issues: inout [ValidationError]) -> String? {
        guard text.count <= maxDescriptionLength, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            issues.append(ValidationError(field: "description", "must be at most \(maxDescriptionLength) characters without control characters"))
            return nil
        }
        return text
    }
}

/// A change to an endpoint: the fields given, each checked as at registration.
public struct WebhookPatch: Sendable, Hashable {
    public var url: String?
    public var events: [ChangeType]?
    public var description: String?
    /// Re-enabling sends what waited while it was disabled.
    public var enabled: Bool?

    public init(url: String?, events: [String]?, description: String?, enabled: Bool?) throws(ValidationErrors) {
        var issues: [ValidationError] = []
        self.url = url.flatMap { WebhookDraft.check(url: $0, into: &issues) }
        self.events = events.flatMap { WebhookDraft.check(events: $0, into: &issues) }
        self.description = description.flatMap { WebhookDraft.check(description: $0, into: &issues) }
        self.enabled = enabled
        if url == nil && events == nil && description == nil && enabled == nil {
            issues.append(ValidationError(field: "url", "give url, events, description or enabled"))
        }
        guard issues.isEmpty else { throw ValidationErrors(issues) }
    }
}

/// No webhook has this id.
public struct WebhookNotFound: Error, Sendable, CustomStringConvertible {
    public var id: Int64
    public init(id: Int64) { self.id = id }
    public var description: String { "there is no webhook \(id)" }
}

/// Where a delivery stands.
public enum DeliveryState: String, Sendable, Hashable, CaseIterable {
    /// Not delivered yet: due at `next_at` (none while its endpoint is disabled).
    case pending
    /// A 2xx answered it.
    case delivered
    /// Given up: every attempt failed, or the endpoint answered 410 Gone.
    case failed
}

/// A delivery as administrators see it.
public struct Delivery: Sendable, Hashable {
    public struct Attempt: Sendable, Hashable {
        public var number: Int
        public var at: Date
        /// The HTTP status, when an answer came.
        public var status: Int?
        /// Why no answer came (refused, timed out), when none did.
        public var error: String?
        public var milliseconds: Int64

        public init(number: Int, at: Date, status: Int? = nil, error: String? = nil, milliseconds: Int64) {
            self.number = number
            self.at = at
            self.status = status
            self.error = error
            self.milliseconds = milliseconds
        }
    }

    public var id: Int64
    public var changeSeq: Int64
    public var type: ChangeType?
    public var state: DeliveryState
    public var attemptCount: Int
    public var nextAt: Date?
    public var lastStatus: Int?
    public var lastError: String?
    public var createdAt: Date
    public var finishedAt: Date?
    public var attempts: [Attempt]

    public init(id: Int64, changeSeq: Int64, type: ChangeType? = nil, state: DeliveryState, attemptCount: Int, nextAt: Date? = nil, lastStatus: Int? = nil, lastError: String? = nil, createdAt: Date, finishedAt: Date? = nil, attempts: [Attempt]) {
        self.id = id
        self.changeSeq = changeSeq
        self.type = type
        self.state = state
        self.attemptCount = attemptCount
        self.nextAt = nextAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.finishedAt = finishedAt
        self.attempts = attempts
    }
}
