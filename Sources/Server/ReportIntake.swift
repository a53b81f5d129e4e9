import Geometry
import Interchange
import ReportModel
import ReportService

/// The bodies of `POST /v1/reports` and `PATCH /v1/reports/{id}`, in the interchange
/// vocabulary, read into drafts with every broken rule named at once.
enum ReportIntake {
    /// The fields a report's properties may carry from a client, and what each must be
    /// (the reference data and the service area are checked by the server: a 422 names
    /// each field that breaks them).
    static let members = [
        BodyMember("address", ["type": "string", "minLength": 1, "maxLength": 255, "pattern": .string(OpenAPI.lineText)]),
        BodyMember("city", ["type": "string", "minLength": 1, "maxLength": 100, "pattern": .string(OpenAPI.lineText)]),
        BodyMember("district", ["type": "string", "description": "A code of /v1/districts."]),
        BodyMember("object_type", ["type": "string", "description": "A code of /v1/object-types."]),
        BodyMember("balance_holder", ["type": "string", "description": "A code of a holder that maintains that object type (/v1/object-types)."]),
        BodyMember("violator", ["type": ["string", "null"], "maxLength": 255, "pattern": .string(OpenAPI.lineText)], required: false),
        BodyMember("phones", ["type": "array", "minItems": 1, "maxItems": 5, "items": ["type": "string", "format": "phone"]]),
        BodyMember("comment", ["type": ["string", "null"], "maxLength": 2000, "pattern": .string(OpenAPI.linesText)], required: false),
    ]
    /// A flat body's position.
    static let position = [
        BodyMember("longitude", ["type": "number", "minimum": -180, "maximum": 180, "description": "Within the service area."]),
        BodyMember("latitude", ["type": "number", "minimum": -90, "maximum": 90, "description": "Within the service area."]),
    ]
    static let fields = members.map(\.name)

    /// `NewReport`: a Feature whose properties are the fields, or a flat object of the
    /// fields and the position.
    static let newReportSchema: JSONValue = ["oneOf": [
        OpenAPI.body([BodyMember("type", ["const": "Feature"]), BodyMember("geometry", OpenAPI.ref("Point")), BodyMember("properties", OpenAPI.body(members))]),
        OpenAPI.body(members + position),
    ]]

    /// `ReportPatch`: any of the fields and the position, at least one.
    static let patchSchema = OpenAPI.body((members + position).map { BodyMember($0.name, $0.schema, required: false) }, minMembers: 1)


    /// The fields the server assigns: refused when sent.
    static let assigned = ["id", "status", "created_at", "updated_at"]

    /// A new report: a GeoJSON Feature with a Point, or a flat object with `longitude`
    /// and `latitude`. Every rule it breaks (the body's shape, the reference data, the
    /// service area) is in the thrown ``ValidationErrors``.
    static func draft(_ members: [String: JSONValue], reference: ReferenceData, area: IntakeSettings) throws(ValidationErrors) -> ReportDraft {
        let isFeature = members["type"] != nil || members["geometry"] != nil || members["properties"] != nil
        var body = JSONBody(members: members, allowed: isFeature ? ["type", "geometry", "properties", "id"] : fields + assigned + position.map(\.name))
        let position: Coordinate?
        var properties: JSONBody
        if isFeature {
            body.refuse("id", "is assigned by the server")
            let kind = body.string("type")
            if let kind, kind != "Feature" { body.add(ValidationError(field: "type", "must be \"Feature\" (or send a flat object with longitude and latitude)")) }
            position = point(&body)
            properties = body.object("properties", allowed: fields + assigned, prefix: "") ?? JSONBody(members: [:], allowed: [])
        } else {
            properties = body
            let lon = properties.number("longitude"), lat = properties.number("latitude")
            position = lon.flatMap { lon in lat.map { Coordinate(longitude: lon, latitude: $0) } }
            body = JSONBody(members: [:], allowed: [])
        }
        for name in assigned { properties.refuse(name, "is assigned by the server") }
        let draft = ReportDraft(
            coordinate: position ?? Coordinate(longitude: 0, latitude: 0),
            address: properties.string("address") ?? "", city: properties.string("city") ?? "",
            district: properties.string("district") ?? "", objectType: properties.string("object_type") ?? "",
            balanceHolder: properties.string("balance_holder") ?? "", violator: properties.string("violator", required: false),
            phones: properties.strings("phones") ?? [], comment: properties.string("comment", required: false))
        body.adopt(properties)
        return try checked(draft, body, reference: reference, area: position == nil ? nil : area, feature: isFeature)
    }

    /// The Point of a Feature's `geometry`.
    private static func point(_ body: inout JSONBody) -> Coordinate? {
        var geometry = body.object("geometry", allowed: ["type", "coordinates"])
        defer { body.adopt(geometry) }
        guard geometry != nil else { return nil }
        if let kind = geometry!.string("type"), kind != "Point" { geometry!.add(ValidationError(field: "geometry.type", "must be \"Point\"")) }
        guard let coordinates = geometry!.numbers("coordinates") else { return nil }
        guard coordinates.count == 2 else {
            geometry!.add(ValidationError(field: "geometry.coordinates", "must be [longitude, latitude]"))
            return nil
        }
        return Coordinate(longitude: coordinates[0], latitude: coordinates[1])
    }

    /// A merge patch (RFC 7396) of a report's fields: members present replace, null
    /// removes an optional field. The status changes only by a transition.
    struct Patch: Sendable {
        var texts: [String: String?] = [:]
        var phones: [String]?
        var longitude: Double?
        var latitude: Double?

        /// The draft of `report` with the patch applied.
        func applied(to report: Report) -> ReportDraft {
            var d = ReportDraft(report)
            func text(_ name: String, _ keep: String) -> String { texts[name].map { $0 ?? "" } ?? keep }
            d.address = text("address", d.address)
            d.city = text("city", d.city)
            d.district = text("district", d.district)
            d.objectType = text("object_type", d.objectType)
            d.balanceHolder = text("balance_holder", d.balanceHolder)
            if let v = texts["violator"] { d.violator = v }
            if let v = texts["comment"] { d.comment = v }
            if let phones { d.phones = phones }
            d.coordinate = Coordinate(longitude: longitude ?? d.coordinate.longitude, latitude: latitude ?? d.coordinate.latitude)
            return d
        }
    }

    /// The patch, and the rules its body breaks by itself (the service adds those of the
    /// patched report, so that one 422 names them all).
    static func patch(_ body: JSONBody) -> (patch: Patch, issues: [ValidationError]) {
        var body = body
        var patch = Patch()
        for name in assigned {
            body.refuse(name, name == "status" ? "changes only through POST /v1/reports/{id}/transitions" : "is assigned by the server")
        }
        for name in fields where name != "phones" && body.has(name) {
            if body.isNull(name) {
                if name == "violator" || name == "comment" { patch.texts[name] = .some(nil) } else { body.add(ValidationError(field: name, "is required and cannot be removed")) }
            } else if let text = body.string(name) {
                patch.texts[name] = text
            }
        }
        if body.has("phones") { patch.phones = body.strings("phones") }
        patch.longitude = body.number("longitude", required: false)
        patch.latitude = body.number("latitude", required: false)
        for name in ["longitude", "latitude"] where body.isNull(name) { body.add(ValidationError(field: name, "the position cannot be removed")) }
        if body.issues.isEmpty && patch.texts.isEmpty && patch.phones == nil && patch.longitude == nil && patch.latitude == nil {
            body.add(ValidationError(field: "body", "changes nothing: give at least one of \((fields + ["longitude", "latitude"]).joined(separator: ", "))"))
        }
        return (patch, body.issues)
    }

    /// A draft's own rules and the service area, after the body's, each field named once.
    /// A Feature's position is its `geometry`; a flat object's, its `longitude` and `latitude`.
    static func checked(
        _ draft: ReportDraft, _ body: JSONBody, reference: ReferenceData, area: IntakeSettings?, feature: Bool
    ) throws(ValidationErrors) -> ReportDraft {
        var body = body
        let (checked, problems) = reference.check(draft)
        var all = problems.map { problem in
            feature && (problem.field == "longitude" || problem.field == "latitude") ? ValidationError(field: "geometry", problem.message) : problem
        }
        if let area, !all.contains(where: { ["geometry", "longitude", "latitude"].contains($0.field) }),
           let problem = area.check(checked.coordinate, field: feature ? "geometry" : "longitude")
        {
            all.append(problem)
        }
        body.check { () throws(ValidationErrors) in if !all.isEmpty { throw ValidationErrors(all) } }
        try body.finish()
        return checked
    }
}
