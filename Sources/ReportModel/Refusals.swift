/// A missing, malformed, expired or revoked credential (HTTP 401).
public struct Unauthorized: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A credential that is valid but may not do this (HTTP 403).
public struct Forbidden: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}
