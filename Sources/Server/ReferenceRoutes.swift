import Foundation
import Hummingbird
import ReportModel

/// `/v1/districts`, `/v1/object-types`, `/v1/statuses`: the vocabularies the app's forms
/// offer, with Ukrainian and English names.
struct ReferenceRoutes {
    let reference: ReferenceData

    func register(on router: Router<BasicRequestContext>) {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        struct ObjectType: Encodable {
            var code, nameUk, nameEn: String
            var balanceHolders: [ReferenceData.BalanceHolder]
        }
        let bodies: [(String, Data)] = [
            ("/v1/districts", try! encoder.encode(reference.districts)),
            ("/v1/object-types", try! encoder.encode(reference.objectTypes.map { t in
                ObjectType(code: t.code, nameUk: t.nameUk, nameEn: t.nameEn, balanceHolders: reference.holders(for: t.code))
            })),
            ("/v1/statuses", try! encoder.encode(reference.statuses)),
        ]
        for (path, body) in bodies {
            router.get(RouterPath(path)) { request, _ in
                _ = try QueryParameters(request, allowed: [])
                return Responses.body(Array(body) + [0x0A], type: "application/json")
            }
        }
    }
}
