import Crypto
import Foundation
import JWTKit
import Synchronization
import ReportModel
import StorePorts

/// What an access token says: who (`sub`, the account id), with which role, in which
/// session (`sid`), for whom (`aud`), from whom (`iss`), issued and expiring when, and its
/// own id (`jti`).
public struct AccessClaims: JWTPayload, Equatable {
    public var sub: SubjectClaim
    public var role: String
    public var sid: String
    public var iss: IssuerClaim
    public var aud: AudienceClaim
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    /// A random id: no two tokens are alike, even of one session within one second.
    public var jti: IDClaim

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try aud.verifyIntendedAudience(includes: AccessTokens.audience)
        guard iss.value == AccessTokens.issuer else { throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "not issued by PosterWatch") }
    }
}

/// Access tokens: JWTs signed with HS256 (HMAC-SHA-256, about a microsecond to check),
/// living 15 minutes.
///
/// The signing keys are 256 random bits each, kept in the database (`signing_key`) and
/// named by a `kid`: the newest signs, every kept one verifies, so a rotation
/// (`posterwatch keys rotate`) leaves the tokens already out valid until they expire.
/// jwt-kit checks the signature with the key the `kid` names, refuses `alg: none` and any
/// algorithm but the key's, and ``AccessClaims`` checks `exp`, `aud` and `iss`.
///
/// Replicas share the keys through the database and read them again: at most once a
/// minute when they sign (so a rotation reaches every replica's tokens, and a dropped key
/// stops signing), and when a token fails to verify, at most once in ``rereadEvery``
/// (a replica started after a rotation signs with a key the others did not read yet).
public final class AccessTokens: Sendable {
    public static let lifetime: TimeInterval = 15 * 60
    static let issuer = "posterwatch"
    static let audience = "posterwatch-api"
    /// The least time between two reads of the keys that a failed check asks for.
    static let rereadEvery: TimeInterval = 5
    /// The most time signing goes on with the keys read before.
    static let signWithin: TimeInterval = 60

    private struct Keys: Sendable {
        var collection: JWTKeyCollection
        var signingKid: JWKIdentifier
        /// The kept keys' bits, newest first (they also tag refresh tokens).
        var secrets: [SymmetricKey]
        var readAt: Date
    }

    private let storage: any AccountStorage
    private let current: Mutex<Keys>
    /// When a failed check last asked for the keys again.
    private let lastReread = Mutex(Date.distantPast)

    /// The keys of the store, a first one made if there is none.
    public init(_ storage: any AccountStorage, now: Date = Date()) async throws {
        self.storage = storage
        current = Mutex(try await Self.read(storage, now: now))
    }

    private static func read(_ storage: any AccountStorage, now: Date) async throws -> Keys {
        let stored = try await storage.signingKeys(storingIfNone: Self.newKey(now: now))
        let collection = JWTKeyCollection()
        for key in stored {
            await collection.add(hmac: HMACKey(key: SymmetricKey(data: key.secret)), digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.kid))
        }
        return Keys(collection: collection, signingKid: JWKIdentifier(string: stored[0].kid), secrets: stored.map { SymmetricKey(data: $0.secret) }, readAt: now)
    }

    /// A tag that proves `text` was written by a server of this database: HMAC-SHA-256
    /// under the newest key, 128 bits of it in base64url.
    func tag(_ text: String) -> String {
        Self.tag(text, key: current.withLock { $0.secrets[0] })
    }

    /// Whether `tag` is one of the kept keys' tags of `text` (compared in constant time).
    /// Two rotations of the keys later a tag no longer verifies: the token is then known by
    /// its hash alone, as tokens were before they named their session.
    func verifyTag(_ tag: String, of text: String) -> Bool {
        let given = Array(tag.utf8)
        return current.withLock { $0.secrets }.contains { key in
            let expected = Array(Self.tag(text, key: key).utf8)
            guard expected.count == given.count else { return false }
            return zip(expected, given).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }

    private static func tag(_ text: String, key: SymmetricKey) -> String {
        // Apart from the keys' other use: no JWT signature is a refresh tag.
        Secrets.base64url(Data(HMAC<SHA256>.authenticationCode(for: Data(("posterwatch refresh tag\u{0}" + text).utf8), using: key).prefix(16)))
    }

    /// Holds keys just read, unless a read begun later is held already.
    private func keep(_ fresh: Keys) {
        current.withLock { held in if fresh.readAt >= held.readAt { held = fresh } }
    }

    /// The kid new tokens are signed with.
    var signingKid: JWKIdentifier { current.withLock { $0.signingKid } }

    /// A token for the account's session, and how many seconds it lives.
    public func issue(accountID: Int64, role: Role, sessionID: String, now: Date = Date()) async throws -> (token: String, expiresIn: Int) {
        // Whole seconds, as verifiers commonly compare `iat` with their clock's second.
        let second = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let claims = AccessClaims(
            sub: SubjectClaim(value: String(accountID)), role: role.rawValue, sid: sessionID, iss: IssuerClaim(value: Self.issuer),
            aud: AudienceClaim(value: Self.audience), exp: ExpirationClaim(value: second.addingTimeInterval(Self.lifetime)),
            iat: IssuedAtClaim(value: second), jti: IDClaim(value: Secrets.token(bytes: 12)))
        var keys = current.withLock { $0 }
        if now.timeIntervalSince(keys.readAt) >= Self.signWithin {
            // Marked read first, so that the requests meanwhile sign with the keys held; a
            // read that fails leaves them (a refresh already used up its token).
            current.withLock { $0.readAt = now }
            if let fresh = try? await Self.read(storage, now: now) {
                keep(fresh)
                keys = fresh
            }
        }
        return (try await keys.collection.sign(claims, kid: keys.signingKid), Int(Self.lifetime))
    }

    /// The claims of a token whose signature, algorithm, audience, issuer and expiry hold.
    public func verify(_ token: String, now: Date = Date()) async throws -> AccessClaims {
        let keys = current.withLock { $0 }
        do {
            return try await keys.collection.verify(token, as: AccessClaims.self)
        } catch {
            // Perhaps signed with a key another replica made: read them again, not often.
            let due = lastReread.withLock { last in
                guard now.timeIntervalSince(last) >= Self.rereadEvery else { return false }
                last = now
                return true
            }
            guard due, let fresh = try? await Self.read(storage, now: now) else { throw error }
            keep(fresh)
            return try await fresh.collection.verify(token, as: AccessClaims.self)
        }
    }

    /// Adds a new signing key, which every server signs with within a minute, and keeps the
    /// one before it (whose tokens live on); older keys are dropped.
    public static func rotate(_ storage: any AccountStorage, now: Date = Date()) async throws -> String {
        let key = newKey(now: now)
        try await storage.addSigningKey(key, keeping: 2)
        return key.kid
    }

    static func newKey(now: Date = Date()) -> SigningKey {
        SigningKey(kid: Secrets.token(bytes: 9), secret: Data(Secrets.random(bytes: 32)), createdAt: now)
    }
}

/// Random secrets and their hashes.
enum Secrets {
    static func random(bytes count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// `count` random bytes as unpadded base64url text.
    static func token(bytes count: Int) -> String { base64url(Data(random(bytes: count))) }

    /// Unpadded base64url (RFC 4648 §5), which has no dot.
    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func sha256(_ text: String) -> Data { Data(SHA256.hash(data: Data(text.utf8))) }
}
