import Accounts
import Dispatch
import Foundation
import ReportModel
import SQLiteStore

/// The auth section of `make bench`: what checking an access token costs each request,
/// `GET /v1/me` under wrk with bearer tokens, and what a login costs (bcrypt, cost 12).
extension Bench {
    func measureAuth(_ accounts: AccountService, store: SQLiteReports, port: Int, _ report: inout Report) async throws {
        report.section("Accounts: tokens and logins (the server in this process; wrk as above)", header: ["what", "p50", "p99 or rate"])
        let tokens = try await benchTokens(accounts)

        // A token's first check (signature, algorithm, claims) and its checks on the
        // requests after (the verified-token cache and the revocation set), as every
        // authenticated request does.
        func check(_ tokens: [String], rounds: Int) async throws -> Samples {
            var microseconds: [Double] = []
            for i in 0..<rounds * tokens.count {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try await accounts.authenticate(tokens[i % tokens.count])
                microseconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3)
            }
            return Samples(milliseconds: microseconds)
        }
        var pair = try await accounts.login("bench0@example.org", password: Self.benchPassword, client: "bench")
        var fresh: [String] = []
        for _ in 0..<2_000 {
            pair = try await accounts.refresh(pair.refreshToken)
            fresh.append(pair.accessToken)
        }
        let first = try await check(fresh, rounds: 1)
        let again = try await check(tokens, rounds: 300)
        report.row(["a token's first check (HS256 signature, `alg`, `exp`, `aud`, `iss`; \(fmt(fresh.count)) tokens), µs", f2(first.p50), f2(first.p99)])
        report.row(["a token's check on each later request (verified-token cache, revocation set), µs", f2(again.p50), f2(again.p99)])
        report.goal("access token check per request: p50 ≤ 10 µs", "\(f2(again.p50)) µs (first check \(f2(first.p50)) µs)", again.p50 <= 10)

        let me = try wrk(port: port, paths: ["/v1/me"], bearerTokens: tokens)
        report.row(["`GET /v1/me`, \(tokens.count) bearer tokens in turn, ms", f2(me.p50), "\(fmt(Int(me.rate))) requests/s, p99 \(f2(me.p99)) ms"])
        report.goal("HTTP GET /v1/me with bearer tokens: ≥ 10,000 requests/s", "\(fmt(Int(me.rate)))/s", me.rate >= 10_000)

        var logins: [Double] = []
        for _ in 0..<5 {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try await accounts.login("bench0@example.org", password: Self.benchPassword, client: "bench")
            logins.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        let login = Samples(milliseconds: logins)
        report.row(["a login (bcrypt cost 12, a session, a token), ms", f1(login.p50), f1(login.p99)])
        report.note("No goal for logins: bcrypt at cost 12 is slow on purpose. A first check is HS256 through jwt-kit's key collection (an actor); later ones find the token among those already verified (keyed by the whole token, signature included) and look up the in-memory revocation set.")
    }

    static let benchPassword = "bench password, not a real one"

    /// 64 access tokens: 8 accounts of `role` (made once in the bench database), each
    /// signed in and refreshed 7 times (a refresh makes a new access token of the same
    /// session; the earlier ones stay valid until they expire).
    func benchTokens(_ accounts: AccountService, role: Role = .inspector) async throws -> [String] {
        var tokens: [String] = []
        let rank = Role.people.firstIndex(of: role)!
        for n in 0..<8 {
            let login = role == .inspector ? "bench\(n)@example.org" : "bench-\(role)\(n)@example.org"
            if try await accounts.account(email: login) == nil {
                let draft = try AccountDraft(
                    name: "Bench \(n)", email: login, phone: "+3806799\(rank)000\(n)", password: Self.benchPassword, role: role)
                _ = try await accounts.create(draft)
            }
            var pair = try await accounts.login(login, password: Self.benchPassword, client: "bench-\(n)")
            tokens.append(pair.accessToken)
            for _ in 0..<7 {
                pair = try await accounts.refresh(pair.refreshToken)
                tokens.append(pair.accessToken)
            }
        }
        return tokens
    }
}
