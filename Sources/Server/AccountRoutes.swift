import Accounts
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import ReportModel

/// `/v1/auth/…`, `/v1/me…` and `/v1/users…`: signing in and out, the caller's own
/// account and sessions, and the administration of accounts. Handlers read the body, call
/// ``AccountService`` and answer; who may call each is the endpoint table's to say.
struct AccountRoutes {
    let accounts: AccountService

    func register(on router: Router<AppRequestContext>) {
        router.handlePublic(.register, signUp)
        router.handlePublic(.login, signIn)
        router.handlePublic(.refresh, refresh)
        router.handle(.logout, signOut)
        router.handle(.me, me)
        router.handle(.updateMe, rename)
        router.handle(.changePassword, changePassword)
        router.handle(.mySessions, sessions)
        router.handle(.endSession, endSession)
        router.handle(.users, users)
        router.handle(.updateUser, administer)
    }

    /// The answer of a write that has nothing to say.
    static let done = Response(status: .noContent, headers: [.cacheControl: "no-store"])

    @Sendable func signUp(_ request: Request, _: QueryParameters, _ context: AppRequestContext) async throws -> Response {
        let draft = try await Registration.read(request).draft
        let (_, tokens) = try await accounts.register(draft, client: context.clientGroup)
        var response = try Responses.private(tokens, status: .created)
        response.headers[.location] = "/v1/me"
        return response
    }

    @Sendable func signIn(_ request: Request, _: QueryParameters, _ context: AppRequestContext) async throws -> Response {
        let body = try await Login.read(request)
        return try Responses.private(try await accounts.login(body.login, password: body.password, client: context.clientGroup))
    }

    @Sendable func refresh(_ request: Request, _: QueryParameters, _: AppRequestContext) async throws -> Response {
        return try Responses.private(try await accounts.refresh(try await Refresh.read(request).token))
    }

    @Sendable func signOut(_: Request, _: QueryParameters, _: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        try await accounts.endSession(identity.sessionID, of: identity)
        return Self.done
    }

    @Sendable func me(_: Request, _: QueryParameters, _: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        try Responses.private(Me(try await accounts.account(of: identity)))
    }

    @Sendable func rename(_ request: Request, _: QueryParameters, _: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        return try Responses.private(Me(try await accounts.rename(identity, to: try await MePatch.read(request).name)))
    }

    @Sendable func changePassword(_ request: Request, _: QueryParameters, _ context: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let body = try await PasswordChange.read(request)
        try await accounts.changePassword(of: identity, old: body.old, new: body.new, client: context.clientGroup)
        return Self.done
    }

    @Sendable func sessions(_: Request, _: QueryParameters, _: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let sessions = try await accounts.openSessions(of: identity).map { SessionList.Item($0, current: $0.id == identity.sessionID) }
        return try Responses.private(SessionList(sessions: sessions))
    }

    @Sendable func endSession(_: Request, _: QueryParameters, _ context: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        try await accounts.endSession(context.parameters.get("id") ?? "", of: identity)
        return Self.done
    }

    @Sendable func users(_: Request, _ query: QueryParameters, _: AppRequestContext, _: AccountService.Identity) async throws -> Response {
        let role = try query["role"].map { text throws(ValidationError) in try Role(person: text) }
        let limit = try query.integer("limit", in: 1...1_000, default: 100)!
        let after = try query.integer("after", in: 0...Int(ReportLimits.maxID), default: 0)!
        let page = try await accounts.accounts(role: role, after: Int64(after), limit: limit)
        return try Responses.private(UserList(users: page.map(UserList.User.init), next: page.count == limit ? page.last?.id : nil))
    }

    /// `PATCH /v1/users/{id}` `{role, disabled}`: every bad field named at once.
    @Sendable func administer(_ request: Request, _: QueryParameters, _ context: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let text = context.parameters.get("id") ?? ""
        guard let id = Int64(text), id >= 1 else { throw ValidationError(field: "id", "must be an account id, got \"\(text.prefix(40))\"") }
        let body = try await UserPatch.read(request)
        return try Responses.private(UserList.User(try await accounts.administer(id, role: body.role, disabled: body.disabled, by: identity)))
    }
}

/// `GET /v1/me`: the caller's own account.
struct Me: Codable {
    var id: Int64
    var name, email, phone: String
    var role: Role

    init(_ account: Account) {
        (id, name, email, phone, role) = (account.id, account.name, account.email, account.phone, account.role)
    }
}

/// `GET /v1/me/sessions`.
struct SessionList: Codable {
    struct Item: Codable {
        var id: String
        var createdAt, lastUsedAt, expiresAt: String
        var current: Bool

        init(_ session: Session, current: Bool) {
            id = session.id
            createdAt = RFC3339.string(from: session.createdAt)
            lastUsedAt = RFC3339.string(from: session.lastUsedAt)
            expiresAt = RFC3339.string(from: session.expiresAt)
            self.current = current
        }

        enum CodingKeys: String, CodingKey { case id, createdAt = "created_at", lastUsedAt = "last_used_at", expiresAt = "expires_at", current }
    }
    var sessions: [Item]
}

/// `GET /v1/users`: a page of accounts, and the cursor of the next.
struct UserList: Codable {
    struct User: Codable {
        var id: Int64
        var name, email, phone: String
        var role: Role
        var disabled: Bool
        var createdAt: String
        var lastLoginAt: String?

        init(_ account: Account) {
            (id, name, email, phone, role, disabled) = (account.id, account.name, account.email, account.phone, account.role, account.disabled)
            createdAt = RFC3339.string(from: account.createdAt)
            lastLoginAt = account.lastLoginAt.map { RFC3339.string(from: $0) }
        }

        enum CodingKeys: String, CodingKey {
            case id, name, email, phone, role, disabled, createdAt = "created_at", lastLoginAt = "last_login_at"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(name, forKey: .name)
            try c.encode(email, forKey: .email)
            try c.encode(phone, forKey: .phone)
            try c.encode(role, forKey: .role)
            try c.encode(disabled, forKey: .disabled)
            try c.encode(createdAt, forKey: .createdAt)
            try c.encode(lastLoginAt, forKey: .lastLoginAt)  // null before the first login
        }
    }
    var users: [User]
    var next: Int64?

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(users, forKey: .users)
        try c.encode(next, forKey: .next)  // null on the last page
    }
}
