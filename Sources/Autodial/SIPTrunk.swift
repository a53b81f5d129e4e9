import Foundation
import Geometry

/// Where calls go: the city's telephony provider's SIP trunk. The password is a secret: it
/// goes into a file only baresip reads (mode 0600, in a directory of mode 0700) and into
/// no argument, log line, answer or error.
public struct SIPTrunk: Sendable {
    /// The provider's address, `host` or `host:port`.
    public var address: String
    public var user: String
    public var password: String?
    /// The name the callee's phone shows, if the provider passes it on.
    public var callerName: String?
    /// The local address SIP and RTP are sent from (port chosen by the system).
    public var listen: String
    /// Written before the number's digits in the request URI (`+` for E.164).
    public var numberPrefix: String

    public init(address: String, user: String, password: String?, callerName: String? = nil, listen: String = "0.0.0.0", numberPrefix: String = "+") {
        self.address = address
        self.user = user
        self.password = password
        self.callerName = callerName
        self.listen = listen
        self.numberPrefix = numberPrefix
    }

    /// Checks what goes into baresip's account line, naming the field but never the secret's value.
    public func check() throws(ValidationErrors) {
        var issues: [ValidationError] = []
        let unsafe = CharacterSet(charactersIn: ";<>\"\\,").union(.whitespacesAndNewlines).union(.controlCharacters)
        func clean(_ text: String) -> Bool { text.unicodeScalars.allSatisfy { !unsafe.contains($0) } }
        if address.isEmpty || !clean(address) || address.utf8.count > 255 {
            issues.append(ValidationError(field: "autodial-trunk", "must be host or host:port, with no spaces, quotes, ;, <, > or commas"))
        }
        if user.isEmpty || !clean(user) || user.utf8.count > 100 {
            issues.append(ValidationError(field: "autodial-user", "must be 1 to 100 characters with no spaces, quotes, ;, <, > or commas"))
        }
        if let password, password.isEmpty || !clean(password) || password.utf8.count > 200 {
            issues.append(ValidationError(field: "autodial-password", "must be 1 to 200 characters with no spaces, quotes, ;, <, > or commas (its value is not shown)"))
        }
        if let name = callerName, name.isEmpty || name.contains(where: { "\"\\<>\r\n".contains($0) }) || name.count > 60 {
            issues.append(ValidationError(field: "autodial-caller-name", "must be 1 to 60 characters without quotes, <, > or line breaks"))
        }
        if !clean(listen) || listen.isEmpty { issues.append(ValidationError(field: "autodial-listen", "must be an IP address")) }
        if !numberPrefix.allSatisfy({ $0 == "+" || $0.isASCII && $0.isNumber }) || numberPrefix.count > 8 {
            issues.append(ValidationError(field: "autodial-number-prefix", "must be + or digits, at most 8"))
        }
        guard issues.isEmpty else { throw ValidationErrors(issues) }
    }

    func requestURI(_ number: String) -> String { "sip:\(numberPrefix)\(number)@\(address)" }

    /// baresip's account line (it holds the password).
    var accountLine: String {
        let name = callerName.map { "\"\($0)\" " } ?? ""
        let host = address.split(separator: ":").first.map(String.init) ?? address
        return "\(name)<sip:\(user)@\(host)>;regint=0" + (password.map { ";auth_pass=\($0)" } ?? "")
    }
}

extension SIPTrunk {
    /// The environment the dialer's helpers (baresip, espeak-ng, sox) run in: this
    /// process's, without the passwords it may have been given.
    static var helperEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !["POSTERWATCH_SIP_PASSWORD", "POSTERWATCH_DATABASE_PASSWORD"].contains($0.key) }
    }
}
