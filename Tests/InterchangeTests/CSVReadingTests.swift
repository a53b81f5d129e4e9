import Foundation
import Geometry
import Interchange
import ReportModel
import Testing

let csvHeader = "id,longitude,latitude,address,city,district,object_type,balance_holder,violator,phones,comment,status,created_at,updated_at"

@Suite struct CSVReadingTests {

    @Test func quotedFieldsWithNewlinesCRLFAndBOM() throws {
        let text = "\u{FEFF}" + csvHeader + "\r\n"
            + "1,30.5,50.4,\"вул. Хрещатик, 22\",Київ,d,o,b,\"ТОВ \"\"Ромашка\"\"\",380671234567; 380501234567 ,\"two\r\nlines\",new,2025-03-01T10:20:30Z,2025-03-01T12:20:30.5+02:00\r\n"
            + "\r\n"
            + "2,-0.5,+51,a,c,d,o,b,,380441234567,,,,\r\n"
            + ",,,,,,,,,,,,,\r\n"
            + " 3 , 1e1 , -2.5E-1 ,a,c,d,o,b,,380441234567,\"\",\"\",\"\",\r\n"
        let records = try readAll(text, .csv)
        #expect(records.map(\.location) == [.line(2), .line(5), .line(7)])
        let first = try #require(records[0].value)
        #expect(first == ReportDraft(
            id: 1, coordinate: Coordinate(longitude: 30.5, latitude: 50.4), address: "вул. Хрещатик, 22", city: "Київ",
            district: "d", objectType: "o", balanceHolder: "b", violator: "ТОВ \"Ромашка\"",
            phones: ["380671234567", "380501234567"], comment: "two\r\nlines", status: "new", createdAt: march1,
            updatedAt: march1.addingTimeInterval(0.5)))
        let second = try #require(records[1].value)
        #expect(second.coordinate == Coordinate(longitude: -0.5, latitude: 51))
        #expect(second.violator == nil && second.comment == nil && second.status == nil && second.createdAt == nil)
        let third = try #require(records[2].value)
        #expect(third.id == 3 && third.coordinate == Coordinate(longitude: 10, latitude: -0.25))
    }

    @Test func columnsInAnotherOrderAndOptionalColumnsLeftOut() throws {
        let text = "Phones, ADDRESS ,latitude,longitude,city,district,object_type,balance_holder\n"
            + "380671234567,\"a\nb\",50,30,c,d,o,b\n"
            + "380671234568,x,51,31,c,d,o,b"  // no line end at the end of the file
        let records = try readAll(text, .csv)
        #expect(records.map(\.location) == [.line(2), .line(4)])
        #expect(records[0].value == ReportDraft(
            coordinate: Coordinate(longitude: 30, latitude: 50), address: "a\nb", city: "c", district: "d", objectType: "o",
            balanceHolder: "b", phones: ["380671234567"]))
        #expect(records[1].value?.phones == ["380671234568"])
    }

    @Test func blankLinesBeforeTheHeaderAreSkipped() throws {
        let records = try readAll("\r\n\n" + csvHeader + "\n" + plainRow + "\n", .csv)
        #expect(records.map(\.location) == [.line(4)])
        #expect(fileError("\n\n\r\n", .csv)?.message.hasPrefix("is empty") == true)
    }

    @Test func headerOnlyHasNoRecords() throws {
        #expect(try readAll(csvHeader, .csv).isEmpty)
        #expect(try readAll(csvHeader + "\r\n\r\n", .csv).isEmpty)
    }

    @Test(arguments: [
        ("", "is empty"),
        ("id,longitude,latitude,address,city,district,object_type,phones\n", "lacks required column balance_holder"),
        ("address,city\n", "lacks required columns longitude, latitude, district, object_type, balance_holder, phones"),
        (csvHeader + ",colour,size\n", #"unknown columns "colour", "size""#),
        (csvHeader + ",city\n", "names column city twice"),
        ("\"id,longitude\n", "malformed"),
        ("{\"type\":\"FeatureCollection\",\"features\":[]}", "is not CSV: it starts with '{'"),
        ("\n\n[1,2]", "is not CSV: it starts with '['"),
    ])
    func headerErrors(text: String, message: String) throws {
        let error = try #require(fileError(text, .csv))
        #expect(error.field == "file")
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func emptyHeaderNamesAreIgnoredColumns() throws {
        let records = try readAll("longitude,latitude,address,city,district,object_type,balance_holder,phones,,\n1,2,a,c,d,o,b,380671234567,x,\n", .csv)
        #expect(records.first?.value?.address == "a")
    }

    @Test(arguments: [
        ("1,30,50,a,c,d,o,b,,380671234567,,new,,,extra", "line", "has too many fields: 15, the header has 14 columns"),
        ("1,30,50,a,c,d,o,b", "line", "has too few fields: 8, the header has 14 columns"),
        ("1,30,50,\"a\"x,c,d,o,b,,380671234567,,new,,", "line", "field 4 has text after its closing quote"),
        ("0,30,50,a,c,d,o,b,,380671234567,,new,,", "id", "must be a positive integer, got \"0\""),
        ("x1,30,50,a,c,d,o,b,,380671234567,,new,,", "id", "must be a positive integer, got \"x1\""),
        ("1,,50,a,c,d,o,b,,380671234567,,new,,", "longitude", "is required"),
        ("1,30°,50,a,c,d,o,b,,380671234567,,new,,", "longitude", "must be a number of degrees, got \"30°\""),
        ("1,30,nan,a,c,d,o,b,,380671234567,,new,,", "latitude", "must be a number of degrees"),
        ("1,30,+-5,a,c,d,o,b,,380671234567,,new,,", "latitude", "must be a number of degrees"),
        ("1,30,1e999,a,c,d,o,b,,380671234567,,new,,", "latitude", "must be a number of degrees"),
        ("1,30,50,a,c,d,o,b,,380671234567,,new,01.03.2025,", "created_at", "must be an RFC 3339 date-time"),
        ("1,30,50,a,c,d,o,b,,380671234567,,new,,2025-03-01", "updated_at", "must be an RFC 3339 date-time"),
    ])
    func rowErrors(row: String, field: String, message: String) throws {
        let records = try readAll(csvHeader + "\n" + plainRow + "\n" + row + "\n" + plainRow + "\n", .csv)
        #expect(records.count == 3)
        #expect(records[0].value != nil && records[2].value != nil)
        #expect(records[1].location == .line(3))
        #expect(records[1].error?.field == field)
        #expect(records[1].error?.message.hasPrefix(message) == true, "\(records[1].error?.message ?? "no error")")
    }

    let plainRow = "7,-0.5,51,1 Main St,London,podilskyi,fence,kyivavtodor,,380441234567,,in_progress,2025-03-01T10:20:30Z,2025-03-01T10:20:30Z"

    @Test func unterminatedQuoteRunsToTheEndOfTheFile() throws {
        let text = csvHeader + "\n" + plainRow + "\n" + "1,30,50,\"a\n" + plainRow + "\n"
        let records = try readAll(text, .csv)
        #expect(records.count == 2)
        #expect(records[1].location == .line(3))
        #expect(records[1].error?.message.contains("never closed") == true)
    }

    @Test func invalidUTF8InAFieldNamesTheColumn() throws {
        let bytes = Array((csvHeader + "\n1,30,50,a,c,d,o,b,").utf8) + [0xFF, 0xFE] + Array(",380441234567,,new,,\n".utf8)
        let records = try readAll(bytes: bytes, .csv)
        #expect(records.first?.error == ValidationError(field: "violator", "is not valid UTF-8"))
    }
}
