import Foundation
import Geometry
import Interchange
import ReportModel

/// The query of GeoReport v2's `GET requests` and mySociety's `GET servicerequestupdates`,
/// read with every broken rule named at once.
struct Open311Query {
    /// `service_request_id=1,2,3`: these reports, in this order; the other parameters are
    /// then not read (the standard: it "overrides all other arguments").
    var ids: [Int64]?
    /// Which reports: object types, open or closed, creation times.
    var filter = ReportFilter()
    /// The `start_date`/`end_date` window.
    var window: ClosedRange<Date>
    /// `after`, an extension: only what comes after this id (a report's, or a change's).
    var after: Int64?

    /// GeoReport's longest window, and the default when a client gives no dates.
    static let maxDays = 90
    /// The most requests or updates one answer holds (a client reads on with a later
    /// `start_date`).
    static let maxAnswers = 1_000
    /// The most ids `service_request_id` may list.
    static let maxIDs = 100

    init(_ query: QueryParameters, reference: ReferenceData, now: Date = Date()) throws(ValidationErrors) {
        var problems: [ValidationError] = []
        func note(_ body: () throws(ValidationError) -> Void) {
            do { try body() } catch { problems.append(error) }
        }
        window = now.addingTimeInterval(-Double(Self.maxDays) * 86_400)...now
        note { () throws(ValidationError) in window = try Self.window(query, now: now) }
        note { () throws(ValidationError) in ids = try query["service_request_id"].map(Self.ids) }
        note { () throws(ValidationError) in after = try Self.after(query) }
        note { () throws(ValidationError) in filter.objectTypes = try Self.codes(query["service_code"], field: "service_code", among: reference.objectTypes.map(\.code)) }
        note { () throws(ValidationError) in
            filter.statuses = try Self.codes(query["status"], field: "status", among: ["open", "closed"]).map { wanted in
                reference.statuses.filter { wanted.contains(reference.isOpen($0.code) ? "open" : "closed") }.map(\.code)
            }
        }
        guard problems.isEmpty else { throw ValidationErrors(problems) }
        filter.created = window.lowerBound.milliseconds...window.upperBound.milliseconds
    }

    /// `start_date` and `end_date`: at most ``maxDays`` apart; a missing end is that many
    /// days after the start (or now), a missing start that many before the end.
    static func window(_ query: QueryParameters, now: Date) throws(ValidationError) -> ClosedRange<Date> {
        func date(_ name: String) throws(ValidationError) -> Date? {
            guard let text = query[name] else { return nil }
            guard let date = RFC3339.date(from: text) else {
                throw ValidationError(field: name, "must be a W3C date-time with its zone, like 2026-05-01T00:00:00Z, got \"\(text.prefix(40))\"")
            }
            return date
        }
        let span = Double(maxDays) * 86_400
        let start = try date("start_date"), end = try date("end_date")
        switch (start, end) {
        case (nil, nil): return now.addingTimeInterval(-span)...now
        case (let start?, nil): return start...start.addingTimeInterval(span)
        case (nil, let end?): return end.addingTimeInterval(-span)...end
        case (let start?, let end?):
            guard start <= end else { throw ValidationError(field: "end_date", "must not be before start_date") }
            guard end.timeIntervalSince(start) <= span else { throw ValidationError(field: "end_date", "must be at most \(maxDays) days after start_date") }
            return start...end
        }
    }

    /// `after`: an id from 1, digits only.
    static func after(_ query: QueryParameters) throws(ValidationError) -> Int64? {
        guard let text = query["after"] else { return nil }
        guard let id = QueryParameters.decimalID(text, maxDigits: 18) else {
            throw ValidationError(field: "after", "must be the id of the last request or update read: 1 to 18 digits, the first not 0; got \"\(text.prefix(20))\"")
        }
        return id
    }

    /// A comma-separated list of report ids, at most ``maxIDs``, each given once.
    static func ids(_ text: String) throws(ValidationError) -> [Int64] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count <= maxIDs else { throw ValidationError(field: "service_request_id", "lists at most \(maxIDs) ids") }
        var ids: [Int64] = []
        for part in parts {
            let id = try id(part)
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// A report's id as GeoReport's `service_request_id` gives it.
    static func id(_ text: some StringProtocol) throws(ValidationError) -> Int64 {
        guard let id = QueryParameters.decimalID(text, maxDigits: 10) else {
            throw ValidationError(field: "service_request_id", "must be a report's id (ids separated by commas in a list): 1 to 10 digits, the first not 0; got \"\(text.prefix(20))\"")
        }
        return id
    }

    /// A comma-separated list of codes, each one of `choices`.
    static func codes(_ text: String?, field: String, among choices: [String]) throws(ValidationError) -> [String]? {
        guard let text else { return nil }
        let codes = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        if let unknown = codes.first(where: { !choices.contains($0) }) {
            throw ValidationError(field: field, "must be one or more of \(choices.joined(separator: ", ")) separated by commas; got \"\(unknown.prefix(40))\"")
        }
        return codes
    }
}
