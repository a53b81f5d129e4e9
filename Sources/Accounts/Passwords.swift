import Foundation
import HummingbirdBcrypt
import Synchronization

/// Passwords: their rules, and bcrypt (cost 12 by default) to hash and verify them.
///
/// Hashing is slow on purpose (about a quarter of a second at cost 12), so callers run it
/// off the threads that serve requests. A login for an unknown account is checked against
/// a dummy hash of the same cost, so that it takes as long as a wrong password.
public struct Passwords: Sendable {
    public let cost: UInt8

    public init(cost: UInt8 = 12) { self.cost = cost }

    /// A hash of the same cost for no one, made on first need (once per cost).
    var dummyHash: String {
        if let hash = Self.dummies.withLock({ $0[cost] }) { return hash }
        let hash = Bcrypt.hash("not a password of anyone", cost: cost)
        Self.dummies.withLock { $0[cost] = hash }
        return hash
    }

    private static let dummies = Mutex<[UInt8: String]>([:])

    public func hash(_ password: String) -> String { Bcrypt.hash(password, cost: cost) }

    /// Whether `password` matches `hash`; with no hash (no such account) or a password
    /// holding a NUL, a comparison of the same cost that fails.
    public func verify(_ password: String, hash: String?) -> Bool {
        guard let hash, Self.checkable(password) else {
            _ = Bcrypt.verify(password, hash: dummyHash)
            return false
        }
        return Bcrypt.verify(password, hash: hash)
    }

    /// What is wrong with a new password, or nil: 10 to 128 characters, no control
    /// characters, and not one of the 1,780 of that length among the 20,000 most common
    /// (the list Django ships, from Royce Williams's compilation), compared without case.
    /// bcrypt reads a password up to its first NUL: one after it would not count.
    public static func problem(_ password: String) -> String? {
        guard (10...128).contains(password.count) else { return "must be 10 to 128 characters" }
        guard !password.unicodeScalars.contains(where: isControl) else { return "must not contain control characters" }
        guard !common.contains(password.lowercased()) else { return "is one of the most common passwords; choose another" }
        return nil
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7F }

    /// Whether a presented password can be checked at all: bcrypt would compare only
    /// what comes before a NUL, which no password set since holds.
    static func checkable(_ password: String) -> Bool { !password.utf8.contains(0) }

    static let common: Set<String> = Set(
        String(decoding: PackageResources.common_passwords_txt, as: UTF8.self).split(separator: "\n").map { $0.lowercased() })
}
