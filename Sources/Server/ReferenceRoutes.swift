import Foundation
import Hummingbird
import ReportModel

/// `/v1/districts`, `/v1/object-types`, `/v1/statuses`, `/v1/transitions`: the vocabularies
/// the app's forms offer, with Ukrainian and English names, and the workflow's steps; and
/// `/openapi.json`. Fixed bodies, built once.
struct ReferenceRoutes {
    let reference: ReferenceData

    func register(on router: Router<AppRequestContext>) {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        struct ObjectType: Encodable {
            var code, nameUk, nameEn: String
            var balanceHolders: [ReferenceData.BalanceHolder]
        }
        let bodies: [(Endpoint, Data)] = [
            (.districts, try! encoder.encode(reference.districts)),
            (.objectTypes, try! encoder.encode(reference.objectTypes.map { t in
                ObjectType(code: t.code, nameUk: t.nameUk, nameEn: t.nameEn, balanceHolders: reference.holders(for: t.code))
            })),
            (.statuses, try! encoder.encode(reference.statuses)),
            (.transitions, try! encoder.encode(reference.transitions)),
            (.openAPI, Data(OpenAPI.document(reference).utf8)),
        ]
        for (endpoint, body) in bodies {
            let response = Responses.body(Array(body) + (body.last == 0x0A ? [] : [0x0A]), type: "application/json")
            router.get(RouterPath(endpoint.path)) { request, _ in
                _ = try QueryParameters(request, endpoint: endpoint)
                return response
            }
        }
    }
}
