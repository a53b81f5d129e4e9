import NIOCore
import PostgresNIO

/// One-dimensional arrays without NULLs read from PostgreSQL's binary form by hand, for the
/// arrays a start reads by the million (``PostgresReports/snapshot(_:)``): postgres-nio
/// decodes `[T]` element by element through its generic decoder, which was a tenth of a
/// replica's start on 1M reports, nearly all of the reading of the rows.
///
/// The form: the number of dimensions, whether any element is NULL, the elements' type;
/// for each dimension its length and lower bound; then each element as its length and its
/// bytes (big-endian for numbers). Anything else is an error that names the column.
enum BinaryArrays {
    static func int64s(_ cell: PostgresCell) throws -> [Int64] {
        try elements(cell, type: .int8Array, element: .int8, width: 8) { $0.readInteger(as: Int64.self)! }
    }

    static func int32s(_ cell: PostgresCell) throws -> [Int32] {
        try elements(cell, type: .int4Array, element: .int4, width: 4) { $0.readInteger(as: Int32.self)! }
    }

    static func doubles(_ cell: PostgresCell) throws -> [Double] {
        try elements(cell, type: .float8Array, element: .float8, width: 8) { Double(bitPattern: $0.readInteger(as: UInt64.self)!) }
    }

    static func texts(_ cell: PostgresCell) throws -> [String] {
        try elements(cell, type: .textArray, element: .text, width: nil) { $0.readString(length: $0.readableBytes)! }
    }

    /// The elements of `cell`, an array of `type` whose elements are `element`, each of
    /// `width` bytes when given, each read by `read` from a buffer of exactly its bytes.
    private static func elements<T>(
        _ cell: PostgresCell, type: PostgresDataType, element: PostgresDataType, width: Int32?, _ read: (inout ByteBuffer) -> T
    ) throws -> [T] {
        func refuse(_ what: String) -> BinaryArrayUnexpected { BinaryArrayUnexpected(column: cell.columnName, what: what) }
        guard cell.format == .binary, cell.dataType == type else { throw refuse("a \(cell.format) \(cell.dataType), not a binary \(type)") }
        guard var bytes = cell.bytes else { throw refuse("NULL") }
        guard let dimensions = bytes.readInteger(as: Int32.self), let hasNull = bytes.readInteger(as: Int32.self),
              let elementType = bytes.readInteger(as: UInt32.self)
        else { throw refuse("a header cut short") }
        guard dimensions == 0 || dimensions == 1 else { throw refuse("\(dimensions) dimensions") }
        guard hasNull == 0 else { throw refuse("a NULL element") }
        guard elementType == element.rawValue else { throw refuse("elements of type \(elementType)") }
        guard dimensions == 1 else { return [] }
        guard let count = bytes.readInteger(as: Int32.self), bytes.readInteger(as: Int32.self) != nil, count >= 0,
              Int(count) <= bytes.readableBytes / 4
        else { throw refuse("a length out of range") }
        var values: [T] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let length = bytes.readInteger(as: Int32.self), length >= 0, width == nil || length == width,
                  var value = bytes.readSlice(length: Int(length))
            else { throw refuse("an element of the wrong length") }
            values.append(read(&value))
        }
        guard bytes.readableBytes == 0 else { throw refuse("bytes after the last element") }
        return values
    }
}

/// An array cell not of the form ``BinaryArrays`` reads.
struct BinaryArrayUnexpected: Error, CustomStringConvertible {
    let column: String, what: String
    var description: String { "column \(column): expected a one-dimensional array without NULLs, found \(what)" }
}
