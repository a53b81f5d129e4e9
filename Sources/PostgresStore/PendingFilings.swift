import PostgresNIO
import ReportModel
import StorePorts

/// The filings of a write transaction not yet sent: written together, each report's row,
/// who filed it, its history row and its change row, in one statement whatever their
/// number. A batch of filings then costs the database one round trip instead of one each,
/// which the single writer's connection waits for in turn.
struct PendingFilings {
    private var ids: [Int64] = [], longitudes: [Double] = [], latitudes: [Double] = []
    private var addresses: [String] = [], cities: [String] = [], districts: [String] = [], objectTypes: [String] = []
    private var balanceHolders: [String] = [], phones: [String] = [], statuses: [String] = []
    // Arrays cannot carry NULL here: a flag beside each nullable text, 0 for a missing id.
    private var violators: [String] = [], noViolator: [Bool] = [], comments: [String] = [], noComment: [Bool] = []
    private var created: [Int64] = [], updated: [Int64] = [], filers: [Int64] = [], accounts: [Int64] = [], apiKeys: [Int64] = []
    private var at: [Int64] = [], changes: [Int64] = []

    var isEmpty: Bool { ids.isEmpty }

    mutating func append(_ report: Report, filer: Int64?, author: Author, at time: Int64, change: Int64) {
        ids.append(report.id)
        longitudes.append(report.coordinate.longitude)
        latitudes.append(report.coordinate.latitude)
        addresses.append(report.address)
        cities.append(report.city)
        districts.append(report.district)
        objectTypes.append(report.objectType)
        balanceHolders.append(report.balanceHolder)
        violators.append(report.violator ?? "")
        noViolator.append(report.violator == nil)
        phones.append(Rows.phoneText(report.phones))
        comments.append(report.comment ?? "")
        noComment.append(report.comment == nil)
        statuses.append(report.status)
        created.append(report.createdAt.milliseconds)
        updated.append(report.updatedAt.milliseconds)
        filers.append(filer ?? 0)
        accounts.append(author.accountID ?? 0)
        apiKeys.append(author.apiKeyID ?? 0)
        at.append(time)
        changes.append(change)
    }

    /// The statement that writes them all: common table expressions, to be ended by the
    /// caller (``WriteSession/flush(last:)``).
    var statement: PostgresQuery {
        """
        WITH d AS (
            SELECT * FROM unnest(\(ids)::bigint[], \(longitudes)::float8[], \(latitudes)::float8[], \(addresses)::text[], \(cities)::text[],
                \(districts)::text[], \(objectTypes)::text[], \(balanceHolders)::text[], \(violators)::text[], \(noViolator)::bool[],
                \(phones)::text[], \(comments)::text[], \(noComment)::bool[], \(statuses)::text[], \(created)::bigint[], \(updated)::bigint[],
                \(filers)::bigint[], \(accounts)::bigint[], \(apiKeys)::bigint[], \(at)::bigint[], \(changes)::bigint[])
            AS d(id, longitude, latitude, address, city, district, object_type, balance_holder, violator, no_violator,
                 phones, comment, no_comment, status, created_at, updated_at, filer, account_id, api_key_id, at, change_seq)),
        r AS (
            INSERT INTO report (id, longitude, latitude, address, city, district, object_type, balance_holder, violator, phones, comment, status, created_at, updated_at)
            SELECT id, longitude, latitude, address, city, district, object_type, balance_holder, CASE WHEN no_violator THEN NULL ELSE violator END,
                   phones, CASE WHEN no_comment THEN NULL ELSE comment END, status, created_at, updated_at FROM d),
        f AS (INSERT INTO report_filer (report_id, account_id) SELECT id, filer FROM d WHERE filer <> 0),
        h AS (
            INSERT INTO report_history (report_id, at, account_id, api_key_id, action, from_status, to_status)
            SELECT id, at, NULLIF(account_id, 0), NULLIF(api_key_id, 0), 'filed', NULL, status FROM d ORDER BY change_seq
            RETURNING seq, report_id),
        c AS (INSERT INTO report_change (seq, report_id, action, at, history_seq) SELECT d.change_seq, d.id, 'filed', d.at, h.seq FROM d JOIN h ON h.report_id = d.id)
        """
    }
}
