import Crypto
import Foundation

/// The signing of Standard Webhooks (standardwebhooks.com): an HMAC-SHA256 of
/// `id.timestamp.body` under the endpoint's key, sent as `webhook-signature: v1,<base64>`
/// beside `webhook-id` and `webhook-timestamp`.
public struct WebhookSignature: Sendable {
    /// The key's raw bytes.
    let key: SymmetricKey

    public init(key: some ContiguousBytes) {
        self.key = SymmetricKey(data: key)
    }

    /// The key as Standard Webhooks libraries take it: `whsec_` and base64.
    public static func secretText(_ key: some DataProtocol) -> String {
        "whsec_" + Data(key).base64EncodedString()
    }

    /// A new random key of 32 bytes.
    public static func newKey() -> Data {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
    }

    /// The three headers of one attempt at sending `body` as message `id` at `timestamp`
    /// (whole seconds since 1970), in the order the specification lists them.
    public func headers(id: String, timestamp: Int64, body: some DataProtocol) -> [(name: String, value: String)] {
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: key)
        return [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", "v1," + Data(mac).base64EncodedString()),
        ]
    }
}
