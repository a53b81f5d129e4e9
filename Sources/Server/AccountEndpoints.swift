import Accounts

/// The endpoints of accounts and sessions (`AccountRoutes.swift`), in the table of
/// `Endpoints.swift`.
extension Endpoint {
    static let register = Endpoint(
        path: "/v1/auth/register", summary: "Create an inspector's account and sign in.", parameters: [], answers: ["application/json"],
        answerDescription: "OAuth 2.0 tokens: a 15-minute access token and a refresh token.", answerSchema: "TokenPair",
        method: .post, requestBody: "Registration", success: .created, ownRateClass: .registration)
    static let login = Endpoint(
        path: "/v1/auth/login", summary: "Sign in by email and password.", parameters: [], answers: ["application/json"],
        answerDescription: "OAuth 2.0 tokens. A wrong login, a wrong password and a disabled account are the same 401; after 5 failures of one login from one client address, or 20 from one address at any logins, within 15 minutes, that pair or address gets a 429 with `Retry-After` (the owner elsewhere is not held back).",
        answerSchema: "TokenPair", method: .post, requestBody: "Login", ownRateClass: .login)
    static let refresh = Endpoint(
        path: "/v1/auth/refresh", summary: "Trade a refresh token for a new pair; the old one is used up (presenting it again ends the session).",
        parameters: [], answers: ["application/json"], answerDescription: "OAuth 2.0 tokens.", answerSchema: "TokenPair",
        method: .post, requestBody: "Refresh", ownRateClass: .refresh)
    static let logout = Endpoint(
        path: "/v1/auth/logout", summary: "End the caller's session: its tokens stop at once.", parameters: [], answers: [],
        answerDescription: "The session is ended.", method: .post, access: .role(.inspector), success: .noContent)
    static let me = Endpoint(
        path: "/v1/me", summary: "The caller's account.", parameters: [], answers: ["application/json"],
        answerDescription: "`{id, name, email, phone, role}`.", answerSchema: "Me", access: .role(.inspector))
    static let updateMe = Endpoint(
        path: "/v1/me", summary: "Change the caller's name.", parameters: [], answers: ["application/json"],
        answerDescription: "The account as it is now.", answerSchema: "Me", method: .patch, access: .role(.inspector), requestBody: "MePatch")
    static let changePassword = Endpoint(
        path: "/v1/me/password", summary: "Change the caller's password (the old one is needed); every other session ends.", parameters: [],
        answers: [], answerDescription: "The password is changed.", method: .post, access: .role(.inspector), requestBody: "PasswordChange",
        success: .noContent)
    static let mySessions = Endpoint(
        path: "/v1/me/sessions", summary: "The caller's open sessions, newest first.", parameters: [], answers: ["application/json"],
        answerDescription: "`{sessions: [{id, created_at, last_used_at, expires_at, current}]}`.", answerSchema: "Sessions", access: .role(.inspector))
    static let endSession = Endpoint(
        path: "/v1/me/sessions/{id}", summary: "End one of the caller's sessions: its tokens stop at once.",
        parameters: [Parameter(name: "id", location: .path, required: true, description: "The session's id.", schema: ["type": "string", "pattern": "^[A-Za-z0-9_-]{16}$"])],
        answers: [], answerDescription: "The session is ended.", method: .delete, access: .role(.inspector), success: .noContent)
    static let users = Endpoint(
        path: "/v1/users", summary: "Accounts in id order, paged by cursor (administrators).",
        parameters: [
            Parameter(name: "role", description: "Only accounts with this role.", schema: ["type": "string", "enum": ["inspector", "supervisor", "admin"]]),
            limit(default: 100, max: 1_000), after,
        ],
        answers: ["application/json"], answerDescription: "`{users: [...], next}`; `next` is the cursor of the next page, absent on the last.",
        answerSchema: "Users", access: .role(.admin))
    static let updateUser = Endpoint(
        path: "/v1/users/{id}", summary: "Change an account's role or disable it (administrators); disabling stops its tokens at once.",
        parameters: [Parameter(name: "id", location: .path, required: true, description: "The account's id.", schema: ["type": "integer", "minimum": 1, "maximum": 9_007_199_254_740_991])],
        answers: ["application/json"], answerDescription: "The account as it is now.", answerSchema: "User",
        method: .patch, access: .role(.admin), requestBody: "UserPatch")
}
