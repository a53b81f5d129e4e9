import Foundation
import Geometry
import GRDB
import ReportModel

/// The reports of each whole phone number: `report_phone`, kept by triggers on `report`
/// (and refilled by a bulk import), with each report's position and status beside its id,
/// so that "which open reports carry this number, and where" reads one index range.
enum ReportPhones {
    /// A report's phones (`;`-separated digits) as a JSON array, for `json_each`.
    static func array(_ column: String) -> String { #"'["' || replace(\#(column), ';', '","') || '"]'"# }

    static let schema = """
        CREATE TABLE report_phone (
            phone TEXT NOT NULL,
            report_id INTEGER NOT NULL,
            longitude REAL NOT NULL,
            latitude REAL NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (phone, report_id)
        ) WITHOUT ROWID;
        CREATE TRIGGER report_phone_after_insert AFTER INSERT ON report BEGIN
            INSERT OR IGNORE INTO report_phone SELECT value, new.id, new.longitude, new.latitude, new.status FROM json_each(\(array("new.phones")));
        END;
        CREATE TRIGGER report_phone_after_delete AFTER DELETE ON report BEGIN
            DELETE FROM report_phone WHERE report_id = old.id AND phone IN (SELECT value FROM json_each(\(array("old.phones"))));
        END;
        CREATE TRIGGER report_phone_after_update AFTER UPDATE OF id, phones, longitude, latitude, status ON report BEGIN
            DELETE FROM report_phone WHERE report_id = old.id AND phone IN (SELECT value FROM json_each(\(array("old.phones"))));
            INSERT OR IGNORE INTO report_phone SELECT value, new.id, new.longitude, new.latitude, new.status FROM json_each(\(array("new.phones")));
        END;
        """

    /// Fills the table from every report, in key order (so the B-tree is appended to).
    static let fill = """
        INSERT OR IGNORE INTO report_phone
            SELECT j.value, r.id, r.longitude, r.latitude, r.status FROM report r, json_each(\(array("r.phones"))) j ORDER BY 1, 2
        """
}

extension SQLiteReports {
    /// The newest `limit` reports that carry the normalized number `phone`.
    public func holders(of phone: String, limit: Int) throws -> [PhoneHolder] {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT report_id, longitude, latitude, status FROM report_phone WHERE phone = ? ORDER BY report_id DESC LIMIT ?
                """)
            return try Row.fetchAll(statement, arguments: [phone, limit]).map {
                PhoneHolder(reportID: $0[0], coordinate: Coordinate(longitude: $0[1], latitude: $0[2]), status: $0[3])
            }
        }
    }
}
