/// A refresh token as clients hold it: `<session id>.<secret>`. Only the secret's hash is
/// stored; the session's id lets a token replaced any number of rotations ago still be
/// known as that session's, so that presenting it ends the session (a copy in someone
/// else's hands) instead of being an unknown token. Tokens given before carried the
/// secret alone, and are still taken.
struct RefreshToken: Sendable, Hashable {
    var session: String?
    var secret: String

    init(session: String, secret: String) {
        self.session = session
        self.secret = secret
    }

    /// A token as presented. Session ids and secrets are base64url, which has no dot.
    init(_ text: String) {
        if let dot = text.firstIndex(of: "."), text.index(after: dot) < text.endIndex, dot > text.startIndex {
            (session, secret) = (String(text[..<dot]), String(text[text.index(after: dot)...]))
        } else {
            (session, secret) = (nil, text)
        }
    }

    var text: String { session.map { $0 + "." + secret } ?? secret }
}
