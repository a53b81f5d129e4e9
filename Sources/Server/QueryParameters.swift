import Clustering
import Foundation
import Geometry
import Hummingbird
import Interchange
import Offloading
import ReportService

/// The query string of a request, checked: every parameter must be one the endpoint
/// takes, and given once. Values are read by typed accessors that name the parameter and
/// the rule when a value is wrong.
struct QueryParameters {
    private var values: [String: String] = [:]

    init(_ request: Request, endpoint: Endpoint) throws(ValidationError) {
        for (name, value) in Self.pairs(request.uri.query ?? "") {
            guard endpoint.parameters.contains(where: { $0.location == .query && $0.name == name }) else {
                let allowed = endpoint.queryNames
                let takes = allowed.isEmpty ? "this endpoint takes no parameters" : "this endpoint takes \(allowed.joined(separator: ", "))"
                throw ValidationError(field: String(name.prefix(40)), "unknown parameter; \(takes)")
            }
            guard values[name] == nil else { throw ValidationError(field: name, "is given more than once") }
            guard let value, !value.utf8.contains(0) else {
                throw ValidationError(field: name, "must be percent-encoded UTF-8 text without NUL (%00)")
            }
            values[name] = value
        }
    }

    /// The query's names and values, decoded as browsers and HTTP clients encode them
    /// (`application/x-www-form-urlencoded`): `+` is a space, `%XX` an octet. A value whose
    /// octets are not UTF-8 is nil (a name is kept as it came, to be refused as unknown).
    static func pairs(_ query: String) -> [(name: String, value: String?)] {
        func decode(_ text: Substring) -> String? {
            guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return String(text) }
            return text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return query.split(separator: "&").map { item in
            guard let equals = item.firstIndex(of: "=") else { return (decode(item) ?? String(item), "") }
            let name = item[..<equals]
            return (decode(name) ?? String(name), decode(item[item.index(after: equals)...]))
        }
    }

    subscript(name: String) -> String? { values[name] }

    /// A decimal id as paths and queries write it: 1 to `maxDigits` ASCII digits, the
    /// first not 0; nil otherwise.
    static func decimalID(_ text: some StringProtocol, maxDigits: Int) -> Int64? {
        guard text.first != "0", (1...maxDigits).contains(text.count), text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(text)
    }

    /// The given parameters that are present, as `&name=value…` (values percent-encoded),
    /// for links that keep a request's filters.
    func carried(_ names: [String]) -> String {
        names.reduce(into: "") { text, name in
            if let value = values[name] { text += "&\(name)=\(URLText.encode(value))" }
        }
    }

    /// An integer in `range`, or `fallback` when absent. With `clampedTo`, larger values
    /// (however many digits) become that value instead of an error.
    func integer(_ name: String, in range: ClosedRange<Int>, default fallback: Int? = nil, clampedTo cap: Int? = nil) throws(ValidationError) -> Int? {
        guard let text = values[name] else { return fallback }
        if let cap, !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), Int(text).map({ $0 > cap }) ?? true {
            return cap
        }
        guard let value = Int(text), range.contains(value) else {
            throw ValidationError(field: name, "must be an integer from \(range.lowerBound) to \(range.upperBound), got \"\(text.prefix(40))\"")
        }
        return value
    }

    /// One of `choices`, or `fallback` when absent.
    /// A text parameter of at most `maxLength` characters.
    func text(_ name: String, maxLength: Int) throws(ValidationError) -> String? {
        guard let value = values[name] else { return nil }
        guard value.count <= maxLength else { throw ValidationError(field: name, "must be at most \(maxLength) characters") }
        return value
    }

    func choice(_ name: String, _ choices: [String], default fallback: String) throws(ValidationError) -> String {
        guard let text = values[name] else { return fallback }
        guard choices.contains(text) else { throw ValidationError(field: name, "must be one of \(choices.joined(separator: ", ")), got \"\(text.prefix(40))\"") }
        return text
    }

    /// A decimal number in `range`, or nil when absent.
    func number(_ name: String, in range: ClosedRange<Double>) throws(ValidationError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = DecimalNumber.parse(text), range.contains(value) else {
            throw ValidationError(field: name, "must be a number from \(range.lowerBound) to \(range.upperBound), got \"\(text.prefix(40))\"")
        }
        return value
    }

    func required<T>(_ name: String, _ value: T?) throws(ValidationError) -> T {
        guard let value else { throw ValidationError(field: name, "is required") }
        return value
    }

    /// `bbox=W,S,E,N` in degrees.
    func bbox() throws(ValidationError) -> BoundingBox? {
        try values["bbox"].map { text throws(ValidationError) in try BoundingBox(parsing: text) }
    }

    /// `status=a,b`: a list of codes (spaces around them ignored).
    func statuses() -> [String]? {
        values["status"].map { $0.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingSpaces) } }
    }

    /// `datetime=…` as OGC API – Features writes it, in milliseconds.
    func created() throws(ValidationError) -> ClosedRange<Int64>? {
        try values["datetime"].map { text throws(ValidationError) in try DateTimeInterval(parsing: text).milliseconds }
    }

    /// The cluster filter of `status` and `datetime` (clusters and tiles).
    func clusterFilter(_ service: ReportService) throws(ValidationError) -> ClusterFilter {
        try service.filter(statuses: statuses(), created: created())
    }
}

extension Router<AppRequestContext> {
    /// Registers a read endpoint of the table in `Endpoints.swift`: GET (and HEAD) on its
    /// path; the query string is checked against the parameters it lists; the handler,
    /// whose store reads may be done in place (SQLite), runs off the few threads that serve
    /// every request (`Blocking.offPool`). (Measured: running the in-memory cluster answers
    /// on them instead was 15-20 % slower at zoom 14 under wrk, as the two cooperative
    /// threads then compute while they should be moving bytes.)
    func read(_ endpoint: Endpoint, _ handler: @escaping @Sendable (Request, QueryParameters, AppRequestContext) async throws -> Response) {
        precondition(endpoint.access == .anyone && endpoint.method == .get, "\(endpoint.path) is not a public read: register it with handle")
        get(RouterPath(endpoint.path)) { request, context in
            let query = try QueryParameters(request, endpoint: endpoint)
            return try await Blocking.offPool { try await handler(request, query, context) }
        }
    }
}

