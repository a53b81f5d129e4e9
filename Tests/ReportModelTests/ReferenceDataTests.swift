import Foundation
import Geometry
@testable import ReportModel
import Testing

@Suite("Reference data")
struct ReferenceDataTests {
    let reference = try! ReferenceData.bundled()

    @Test("the shipped vocabularies are complete")
    func shipped() throws {
        #expect(reference.districts.count == 10)
        #expect(Set(reference.objectTypes.map(\.code)) == ["lighting_pole", "power_pole", "transit_stop", "building_facade", "fence", "underpass", "tree", "other"])
        #expect(reference.statuses.map(\.code) == ["new", "verifying", "confirmed", "phone_blocked", "removed", "rejected", "duplicate", "cancelled"])
        #expect(reference.initialStatus == "new")
        for type in reference.objectTypes { #expect(!reference.holders(for: type.code).isEmpty) }
        // The directory loader reads the same files the build embeds.
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../data/reference")
        #expect(try ReferenceData.load(directory: directory) == reference)
    }

    @Test("inconsistent vocabularies are rejected")
    func inconsistent() {
        let district = ReferenceData.District(code: "a", nameUk: "А", nameEn: "A", center: [30, 50])
        let type = ReferenceData.Entry(code: "pole", nameUk: "Стовп", nameEn: "Pole")
        let status = ReferenceData.Status(code: "new", nameUk: "Нове", nameEn: "New", open: true)
        #expect(throws: ValidationError(field: "balance_holders", "h refers to unknown object type \"tree\"")) {
            try ReferenceData(districts: [district], objectTypes: [type],
                              balanceHolders: [.init(code: "h", nameUk: "Х", nameEn: "H", objectTypes: ["pole", "tree"])], statuses: [status])
        }
        #expect(throws: ValidationError(field: "object_types", "tree has no balance holder")) {
            try ReferenceData(districts: [district], objectTypes: [type, .init(code: "tree", nameUk: "Дерево", nameEn: "Tree")],
                              balanceHolders: [.init(code: "h", nameUk: "Х", nameEn: "H", objectTypes: ["pole"])], statuses: [status])
        }
        #expect(throws: ValidationError(field: "districts", "code \"Bad Code\" must be lower-case ASCII letters, digits and _")) {
            try ReferenceData(districts: [.init(code: "Bad Code", nameUk: "Б", nameEn: "B", center: [0, 0])], objectTypes: [type],
                              balanceHolders: [.init(code: "h", nameUk: "Х", nameEn: "H", objectTypes: ["pole"])], statuses: [status])
        }
        // More than the index and the tally number (a start used to stop on a precondition).
        let statuses = (0..<17).map { ReferenceData.Status(code: "s\($0)", nameUk: "С", nameEn: "S", open: true) }
        #expect(throws: ValidationError(field: "statuses", "must be at most 16, got 17")) {
            try ReferenceData(districts: [district], objectTypes: [type],
                              balanceHolders: [.init(code: "h", nameUk: "Х", nameEn: "H", objectTypes: ["pole"])], statuses: statuses)
        }
        let districts = (0...65_536).map { ReferenceData.District(code: "d\($0)", nameUk: "Р", nameEn: "D", center: [30, 50]) }
        #expect(throws: ValidationError(field: "districts", "must be at most 65536, got 65537")) {
            try ReferenceData(districts: districts, objectTypes: [type],
                              balanceHolders: [.init(code: "h", nameUk: "Х", nameEn: "H", objectTypes: ["pole"])], statuses: [status])
        }
    }

    func draft() -> ReportDraft {
        ReportDraft(coordinate: Coordinate(longitude: 30.5, latitude: 50.4), address: "вул. Хрещатик, 22", city: "Київ",
                    district: "pecherskyi", objectType: "tree", balanceHolder: "kyivzelenbud", phones: ["0671234567"])
    }

    @Test("a comment may hold line breaks; positions near 0 become 0")
    func linesAndTinyValues() throws {
        var d = draft()
        d.comment = "Клей свіжий.\nНомер у двох місцях."
        d.coordinate = Coordinate(longitude: 1e-40, latitude: -1e-300)
        let valid = try reference.validate(d)
        #expect(valid.comment == d.comment)
        #expect(valid.coordinate == Coordinate(longitude: 0, latitude: 0))
        // U+FFFE and U+FFFF are no characters: XML cannot hold them (an Open311 answer would not parse).
        for bad in ["x\u{FFFF}", "\u{FFFE}y"] {
            var e = draft()
            e.comment = bad
            e.address = bad
            #expect(Set(reference.check(e).problems.map(\.field)) == ["comment", "address"], "\(reference.check(e).problems)")
        }
    }

    @Test("a valid draft comes back normalized")
    func valid() throws {
        var d = draft()
        d.comment = "  \n"
        d.violator = " ТОВ «Кредит» "
        let valid = try reference.validate(d)
        #expect(valid.phones == ["380671234567"])
        #expect(valid.comment == nil)
        #expect(valid.violator == "ТОВ «Кредит»")
    }

    @Test("texts are trimmed of exactly Unicode's White_Space")
    func whitespace() throws {
        var mismatches: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), scalar.isWhitespace != scalar.properties.isWhitespace else { continue }
            mismatches.append(value)
        }
        #expect(mismatches.isEmpty, "\(mismatches.map { String($0, radix: 16) })")
        var d = draft()
        d.address = "\u{3000}\u{A0}вул. Хрещатик, 22\u{2029}\u{85} "
        #expect(try reference.validate(d).address == "вул. Хрещатик, 22")
        d.address = "\u{200B}вул. Хрещатик, 22"  // a zero-width space is not White_Space
        #expect(try reference.validate(d).address == d.address)
    }

    @Test("a text is checked as its scalars say, whatever its bytes (against a model over scalars)")
    func textsAgainstModel() {
        // Scalars whose UTF-8 shares bytes with the refused ones (C2 xx, EF BF xx, xx 80),
        // the refused ones, and White_Space in and out of ASCII.
        let alphabet: [Unicode.Scalar] = [
            "a", "Z", "7", " ", "\n", "\r", "\t", "\u{0}", "\u{7}", "\u{1F}", "\u{7F}", "\u{80}", "\u{85}", "\u{9F}", "\u{A0}",
            "\u{A1}", "\u{C2}", "\u{102}", "\u{142}", "ж", "р", "\u{1680}", "\u{2029}", "\u{200B}", "\u{3000}", "\u{EFBF}",
            "\u{FEFF}", "\u{FFBE}", "\u{FFBF}", "\u{FFEF}", "\u{FFFD}", "\u{FFFE}", "\u{FFFF}", "\u{1F44D}",
        ]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<50_000 {
            let scalars = (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            let text = String(String.UnicodeScalarView(scalars))
            let lines = Bool.random(using: &random)
            let max = Int.random(in: 0...10, using: &random)
            let expected = Self.modelText(scalars, max: max, lines: lines)
            // The bytes' verdict on a native string is the scalars' (never merely cautious).
            #expect(ReferenceData.hasNoRefusedScalar(text.utf8, lines: lines) == !scalars.contains { Self.refusal($0, lines: lines) != nil })
            do {
                let checked = try ReferenceData.optionalText(text, "comment", max: max, lines: lines)
                #expect(expected == .success(checked), "\(scalars.map { String($0.value, radix: 16) }) max \(max) lines \(lines)")
            } catch {
                #expect(expected == .failure(Refusal(error.message)), "\(scalars.map { String($0.value, radix: 16) }) max \(max) lines \(lines)")
            }
        }
    }

    /// What `optionalText` gives, from the rules as written: at most `max` scalars as sent,
    /// trimmed of White_Space, empty as nil, no control (but line breaks and tabs with
    /// `lines`) and no U+FFFE or U+FFFF; the first refused scalar is named.
    static func modelText(_ scalars: [Unicode.Scalar], max: Int, lines: Bool) -> Result<String?, Refusal> {
        if scalars.count > max { return .failure(Refusal("must be at most \(max) characters, got \(scalars.count)")) }
        var trimmed = scalars[...]
        while let first = trimmed.first, first.properties.isWhitespace { trimmed.removeFirst() }
        while let last = trimmed.last, last.properties.isWhitespace { trimmed.removeLast() }
        if trimmed.isEmpty { return .success(nil) }
        if let refusal = trimmed.lazy.compactMap({ refusal($0, lines: lines) }).first { return .failure(refusal) }
        return .success(String(String.UnicodeScalarView(trimmed)))
    }

    /// Why a scalar is refused in a text: a control (but line breaks and tabs with `lines`),
    /// U+FFFE or U+FFFF.
    static func refusal(_ scalar: Unicode.Scalar, lines: Bool) -> Refusal? {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let named = String(repeating: "0", count: Swift.max(0, 4 - hex.count)) + hex
        if scalar.properties.generalCategory == .control && !(lines && ["\n", "\r", "\t"].contains(scalar)) {
            return Refusal("must not contain control characters (found U+\(named))")
        }
        if scalar.value == 0xFFFE || scalar.value == 0xFFFF { return Refusal("must not contain U+\(named), which is not a character") }
        return nil
    }

    struct Refusal: Error, Equatable {
        let message: String
        init(_ message: String) { self.message = message }
    }

    @Test("each broken rule names its field", arguments: [
        "id", "latitude", "longitude", "address", "address-long", "city", "district", "object_type", "balance_holder",
        "balance_holder-misfit", "status", "phones", "comment", "updated_at", "created_at",
        "address-emoji", "address-nul", "city-control", "violator-newline", "address-padded", "comment-padded",
    ])
    func broken(rule: String) {
        var d = draft()
        switch rule {
        case "id": d.id = 0
        case "latitude": d.coordinate.latitude = 91
        case "longitude": d.coordinate.longitude = -.infinity
        case "address": d.address = "   "
        case "address-long": d.address = String(repeating: "а", count: 256)
        case "city": d.city = ""
        case "district": d.district = "atlantis"
        case "object_type": d.objectType = "billboard"
        case "balance_holder": d.balanceHolder = "nobody"
        case "balance_holder-misfit": d.balanceHolder = "kyivmiskvitlo"
        case "status": d.status = "closed"
        case "phones": d.phones = ["not a phone"]
        case "comment": d.comment = String(repeating: "x", count: 2001)
        case "created_at": d.createdAt = Date(timeIntervalSince1970: -1)
        // 200 characters, 400 Unicode scalars: SQLite counts scalars.
        case "address-emoji": d.address = String(repeating: "👍🏽", count: 200)
        case "address-nul": d.address = "\u{0}вул. Хрещатик, 1"
        case "city-control": d.city = "Ки\u{7}їв"
        case "violator-newline": d.violator = "ТОВ\n«Кредит»"
        // Within the limit once trimmed, past it as sent (the OpenAPI maxLength counts what is sent).
        case "address-padded": d.address = " " + String(repeating: "а", count: 255)
        case "comment-padded": d.comment = "\u{3000}" + String(repeating: "x", count: 2000) + "\n"
        default:
            d.createdAt = Date(timeIntervalSince1970: 100)
            d.updatedAt = Date(timeIntervalSince1970: 99)
        }
        do {
            _ = try reference.validate(d)
            Issue.record("\(rule) should be rejected")
        } catch {
            #expect(error.field == String(rule.split(separator: "-")[0]))
        }
    }
}
