import Foundation
import Interchange
import ReportModel

/// The feed's JSON: `{changes: [...], last_seq}`, written by hand around the reports'
/// own Feature writer (a page of a thousand changes is a thousand Features). It writes
/// what an entry holds: the public's entries hold only what the public may see
/// (``ChangeEntry/publicForm``).
public enum ChangeJSON {
    public static func page(_ page: ChangePage) throws -> [UInt8] {
        var out = Array(#"{"changes":["#.utf8)
        for (i, entry) in page.entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            try append(entry, to: &out)
        }
        out += Array(#"],"last_seq":\#(page.lastSeq)}"#.utf8)
        out.append(0x0A)
        return out
    }

    /// A webhook's payload, as Standard Webhooks shape it: `{type, timestamp, data}`,
    /// `data` being the entry as the feed writes it (so an integration parses one form).
    public static func webhookPayload(_ entry: ChangeEntry) throws -> [UInt8] {
        var out = Array(#"{"type":"\#(entry.type.rawValue)","timestamp":"\#(RFC3339.string(from: entry.at))","data":"#.utf8)
        try append(entry, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// One entry: `{seq, type, id}`, then with a report `at` and `report`, and for staff
    /// `hidden`, `change` and `filer_id`; a phone's change has `at`, `phone` and `status`
    /// (now), and for staff `change`.
    public static func append(_ entry: ChangeEntry, to out: inout [UInt8]) throws {
        out += Array(#"{"seq":\#(entry.seq),"type":"\#(entry.type.rawValue)","id":\#(entry.reportID)"#.utf8)
        if let report = entry.report {
            out += Array(#","at":"\#(RFC3339.string(from: entry.at))","report":"#.utf8)
            GeoJSON.appendFeature(report, to: &out)
        } else if let phone = entry.phone {
            out += Array(#","at":"\#(RFC3339.string(from: entry.at))","phone":"\#(phone.number)","status":"\#(phone.status.rawValue)""#.utf8)
            if let change = phone.change {
                out += Array(#","change":"#.utf8) + (try encoder.encode(PhoneStaffChange(change)))
            }
        } else if entry.type == .datasetChanged {
            out += Array(#","at":"\#(RFC3339.string(from: entry.at))""#.utf8)
        }
        if let hidden = entry.hidden {
            out += Array(#","hidden":"#.utf8) + (try encoder.encode(HiddenNote(hidden)))
        }
        if let history = entry.history {
            out += Array(#","change":"#.utf8) + (try encoder.encode(StaffChange(history)))
        }
        if let filer = entry.filerID {
            out += Array(#","filer_id":\#(filer)"#.utf8)
        }
        out.append(UInt8(ascii: "}"))
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()


    /// What staff see of a change: who made it and what it did.
    struct StaffChange: Encodable {
        var accountID: Int64?
        var apiKeyID: Int64?
        var fromStatus: String?
        var toStatus: String?
        var note: String?
        var fields: [FieldChange]

        init(_ history: HistoryEntry) {
            accountID = history.author.accountID
            apiKeyID = history.author.apiKeyID
            fromStatus = history.fromStatus
            toStatus = history.toStatus
            note = history.note
            fields = history.changes
        }

        enum CodingKeys: String, CodingKey {
            case accountID = "account_id", apiKeyID = "api_key_id", fromStatus = "from_status", toStatus = "to_status", note, fields
        }
    }
}

/// What staff see of a phone's change.
struct PhoneStaffChange: Encodable {
    var accountID: Int64?
    var apiKeyID: Int64?
    var fromStatus: String
    var toStatus: String
    var note: String?
    var moved: Int

    init(_ entry: PhoneHistoryEntry) {
        (accountID, apiKeyID, note, moved) = (entry.author.accountID, entry.author.apiKeyID, entry.note, entry.moved)
        (fromStatus, toStatus) = (entry.fromStatus.rawValue, entry.toStatus.rawValue)
    }

    enum CodingKeys: String, CodingKey {
        case accountID = "account_id", apiKeyID = "api_key_id", fromStatus = "from_status", toStatus = "to_status", note, moved
    }
}

/// Why and since when a report is hidden, as staff see it (the feed and `/v1/reports/{id}`).
public struct HiddenNote: Encodable, Sendable {
    public var at: String
    public var note: String

    public init(_ hidden: HiddenReport) {
        at = RFC3339.string(from: hidden.hiddenAt)
        note = hidden.note
    }
}
