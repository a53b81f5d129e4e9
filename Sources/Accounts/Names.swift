import Foundation
import Geometry

/// Names of accounts and keys: at most 100 characters (Unicode code points, as JSON
/// Schema counts them), no control characters, not only white space; kept trimmed.
enum Names {
    static func checked(_ name: String) throws(ValidationError) -> String {
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ValidationError(field: "name", "must not contain control characters")
        }
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard name.unicodeScalars.count <= 100, !trimmed.isEmpty else { throw ValidationError(field: "name", "must be 1 to 100 characters") }
        return trimmed
    }
}
