import Foundation
import Geometry

/// The first answer to a request sent with an idempotency key: what the request's body
/// hashed to, and the reply.
public struct StoredAnswer: Sendable, Hashable {
    public var fingerprint: Data
    public var reply: Reply

    /// An HTTP answer as kept: status, the headers worth replaying, body.
    public struct Reply: Sendable, Hashable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data

        public init(status: Int, headers: [String: String], body: Data) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    public init(fingerprint: Data, reply: Reply) {
        self.fingerprint = fingerprint
        self.reply = reply
    }
}
