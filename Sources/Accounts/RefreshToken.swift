/// A refresh token as clients hold it: `<session id>.<secret>.<tag>`. Only the secret's
/// hash is stored. The session's id lets a token replaced any number of rotations ago still
/// be known as that session's, so that presenting it ends the session (a copy in someone
/// else's hands) instead of being an unknown token; the tag (``AccessTokens/tag(_:)``, a
/// server key's HMAC of id and secret) proves the token was one a server gave, since a
/// session's id is no secret (access tokens carry it). Tokens given before carried the
/// secret alone, and are still taken.
struct RefreshToken: Sendable, Hashable {
    var session: String?
    var secret: String
    var tag: String?

    init(session: String, secret: String, tags: AccessTokens) {
        (self.session, self.secret) = (session, secret)
        tag = tags.tag(session + "." + secret)
    }

    /// A token as presented. Session ids, secrets and tags are base64url, which has no dot.
    init(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 3, !parts.contains(where: \.isEmpty) {
            (session, secret, tag) = (String(parts[0]), String(parts[1]), String(parts[2]))
        } else if parts.count == 2, !parts.contains(where: \.isEmpty) {
            (session, secret, tag) = (nil, String(parts[1]), nil)  // given untagged for a while: the secret is what counts
        } else {
            (session, secret, tag) = (nil, text, nil)
        }
    }

    var text: String { [session, secret, tag].compactMap { $0 }.joined(separator: ".") }

    /// The session the token names, when a server of this database gave it.
    func provenSession(_ tags: AccessTokens) -> String? {
        guard let session, let tag, tags.verifyTag(tag, of: session + "." + secret) else { return nil }
        return session
    }
}
