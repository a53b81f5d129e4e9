import Accounts
import Foundation
import Generator
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import Server
import Testing
import TestSupport

/// Photos over HTTP: upload, the report's `photos`, serving (cached an hour, ranges, hidden
/// reports), removal, and every refusal writing nothing.
@Suite("Photos over HTTP")
struct PhotoRouteTests {
    static func upload(_ client: any TestClientProtocol, _ id: Int, _ bytes: [UInt8], type: String = "image/jpeg", token: String) async throws -> Answer {
        try await client.execute(
            uri: "/v1/reports/\(id)/photos", method: .post, headers: [.contentType: type, .authorization: "Bearer " + token], body: ByteBuffer(bytes: bytes)
        ) { response in
            let data = Data(buffer: response.body)
            return Answer(status: response.status, headers: response.headers, json: (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:], body: data)
        }
    }

    /// The stored pictures on disk (thumbnails aside).
    static func pictures(_ fixture: Fixture) -> Int {
        let root = fixture.directory.appendingPathComponent("photos")
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return folders.filter { $0.count == 2 }.reduce(0) { n, folder in
            n + ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? []).filter { !$0.hasSuffix(".thumb.jpg") }.count
        }
    }

    /// The photo rows, the report versions and the number of changes: what a photo write changes.
    static func photoState(_ fixture: Fixture) throws -> String {
        try fixture.store.pool.read { db in
            try String.fetchOne(db, sql: """
                SELECT (SELECT group_concat(id || ':' || report_id, ',') FROM report_photo) || ' '
                    || (SELECT coalesce(sum(updated_at), 0) FROM report) || ' ' || (SELECT coalesce(sum(updated_at), 0) FROM report_hidden) || ' '
                    || (SELECT count(*) FROM report_change)
                """) ?? ""
        }
    }

    @Test("upload, list on the report, serve without metadata (cached an hour, ETag, ranges), the same picture once, at most 5, hidden reports to staff only, removal")
    func lifecycle() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let filer = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let other = try await ReportRouteTests.account(fixture, client, .inspector, 2)
            let supervisor = try await ReportRouteTests.account(fixture, client, .supervisor, 3)
            let id = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: filer.token).json["id"] as? Int)
            let jpeg = TestImages.jpeg(width: 400, height: 200, segments: [TestImages.exif(orientation: 6, latitude: 50.45, longitude: 30.52), TestImages.xmp])

            let added = try await Self.upload(client, id, jpeg, token: filer.token)
            #expect(added.status == .created, "\(added.bodyText)")
            #expect(added.json["width"] as? Int == 200 && added.json["height"] as? Int == 400)
            let position = try #require(added.json["exif_position"] as? [String: Any])
            #expect(abs((position["latitude"] as? Double ?? 0) - 50.45) < 1e-4)
            let url = try #require(added.json["url"] as? String)
            let photoID = try #require(added.json["id"] as? Int)

            let served = try await client.get(url)
            #expect(served.status == .ok && served.headers[.contentType] == "image/jpeg")
            #expect(served.headers[.cacheControl] == "public, max-age=3600" && served.headers[.eTag] != nil, "an hour: a hidden report's photos leave caches")
            let tags = try TestImages.exiftool(Array(served.body), in: try TemporaryDirectory(), name: "served.jpg")
            #expect(TestImages.leaks(tags).isEmpty, "\(TestImages.leaks(tags))")
            #expect(try await client.get(url, headers: [.ifNoneMatch: served.headers[.eTag]!]).status == .notModified)
            let part = try await client.get(url, headers: [.range: "bytes=0-99"])
            #expect(part.status == .partialContent && part.body == served.body.prefix(100) && part.headers[.contentRange] == "bytes 0-99/\(served.body.count)")
            let tail = try await client.get(url, headers: [.range: "bytes=-10"])
            #expect(tail.status == .partialContent && tail.body == served.body.suffix(10))
            #expect(try await client.get(url, headers: [.range: "bytes=99999999-"]).status == .rangeNotSatisfiable)
            #expect(try await client.get(try #require(added.json["thumbnail_url"] as? String)).status == .ok)

            let report = try await client.get("/v1/reports/\(id)")
            #expect((report.json["photos"] as? [[String: Any]])?.compactMap { $0["url"] as? String } == [url])
            let again = try await Self.upload(client, id, jpeg, token: filer.token)
            #expect(again.status == .created && again.json["id"] as? Int == photoID, "the same picture is the same photo")
            #expect(try await Self.upload(client, id, jpeg, token: other.token).status == .forbidden, "another inspector")
            #expect(try await client.send(.delete, "/v1/reports/\(id)/photos/\(photoID)", token: other.token).status == .forbidden)
            #expect(try ReportRouteTests.count(fixture, "report_photo") == 1, "the refusals wrote nothing")
            var last = 0
            for n in 1...4 {
                let answer = try await Self.upload(client, id, TestImages.jpeg(width: 100 + n, height: 80), token: filer.token)
                #expect(answer.status == .created)
                last = answer.json["id"] as? Int ?? 0
            }
            let sixth = try await Self.upload(client, id, TestImages.jpeg(width: 99, height: 80), token: supervisor.token)
            #expect(sixth.status == .unprocessableContent && sixth.error?["field"] as? String == "photos")
            #expect(try ReportRouteTests.count(fixture, "report_photo") == 5 && Self.pictures(fixture) == 5)

            // Hidden: the public no longer gets the photo, a supervisor does.
            #expect(try await client.send(.post, "/v1/reports/\(id)/hide", json: ["note": "спам"], token: supervisor.token).status == .ok)
            #expect(try await client.get(url).status == .notFound)
            let staff = try await client.get(url, headers: [.authorization: "Bearer " + supervisor.token])
            #expect(staff.status == .ok && staff.headers[.cacheControl] == "private, no-store")
            // A hidden report's photos wait, as its fields do: to its filer it is gone, to staff a 409; nothing is written.
            let before = try Self.photoState(fixture)
            #expect(try await client.send(.delete, "/v1/reports/\(id)/photos/\(last)", token: filer.token).status == .notFound)
            #expect(try await Self.upload(client, id, TestImages.jpeg(width: 90, height: 80), token: filer.token).status == .notFound)
            let removal = try await client.send(.delete, "/v1/reports/\(id)/photos/\(last)", token: supervisor.token)
            #expect(removal.status == .conflict && removal.error?["message"] as? String == "report \(id) is hidden; unhide it first")
            let addition = try await Self.upload(client, id, TestImages.jpeg(width: 91, height: 80), token: supervisor.token)
            #expect(addition.status == .conflict, "\(addition.bodyText)")
            #expect(try Self.photoState(fixture) == before, "the refusals wrote nothing")
            #expect(try await client.send(.post, "/v1/reports/\(id)/unhide", json: [:], token: supervisor.token).status == .ok)
            #expect(try await client.send(.delete, "/v1/reports/\(id)/photos/\(last)", token: supervisor.token).status == .noContent)

            #expect(try await client.send(.delete, "/v1/reports/\(id)/photos/\(photoID)", token: filer.token).status == .noContent)
            #expect(try await client.send(.delete, "/v1/reports/\(id)/photos/\(photoID)", token: filer.token).status == .notFound)
            #expect(try await client.get(url).status == .notFound, "no report names it now")
            let changes = try #require(try await client.get("/v1/changes?since=0&limit=1000").json["changes"] as? [[String: Any]])
            #expect(changes.filter { $0["type"] as? String == "photo.added" }.count == 5 && changes.filter { $0["type"] as? String == "photo.removed" }.count == 2)
        }
    }

    @Test("refusals, each a 4xx that writes nothing: another media type, over 15 MB, not an image, truncated, a bad CRC, a bomb, no such report")
    func refusals() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let filer = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let id = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: filer.token).json["id"] as? Int)
            let jpeg = TestImages.jpeg(width: 64, height: 64)
            let cases: [(String, [UInt8], String, HTTPResponse.Status)] = [
                ("HTML as text/html", Array("<html></html>".utf8), "text/html", .unsupportedMediaType),
                ("16 MB", jpeg + [UInt8](repeating: 0, count: 16_000_000), "image/jpeg", .contentTooLarge),
                ("GIF as image/jpeg", Array("GIF89a".utf8) + [1, 0, 1, 0], "image/jpeg", .unprocessableContent),
                ("empty", [], "image/png", .unprocessableContent),
                ("truncated JPEG", Array(jpeg.prefix(jpeg.count / 2)), "image/jpeg", .unprocessableContent),
                ("PNG with a bad CRC", TestImages.png(width: 8, height: 8, corruptCRC: true), "image/png", .unprocessableContent),
                ("PNG bomb", TestImages.bombPNG(width: 60_000, height: 60_000), "image/png", .unprocessableContent),
            ]
            for (name, bytes, type, status) in cases {
                let answer = try await Self.upload(client, id, bytes, type: type, token: filer.token)
                #expect(answer.status == status, "\(name): \(answer.bodyText.prefix(200))")
            }
            #expect(try await Self.upload(client, 999_999, jpeg, token: filer.token).status == .notFound)
            #expect(try await client.execute(uri: "/v1/reports/\(id)/photos", method: .post, headers: [.contentType: "image/jpeg"], body: ByteBuffer(bytes: jpeg)) { $0.status } == .unauthorized)
            #expect(try ReportRouteTests.count(fixture, "report_photo") == 0 && Self.pictures(fixture) == 0)
            #expect(try await client.get("/v1/photos/" + String(repeating: "a", count: 64) + ".jpg").status == .notFound)
            // Once the report is no longer open, its filer may not add to it.
            let supervisor = try await ReportRouteTests.account(fixture, client, .supervisor, 3)
            for step in ["verifying", "rejected"] {
                let body: [String: Any] = step == "rejected" ? ["to": step, "note": "не реклама"] : ["to": step]
                #expect(try await client.send(.post, "/v1/reports/\(id)/transitions", json: body, token: supervisor.token).status == .ok, "\(step)")
            }
            #expect(try await Self.upload(client, id, jpeg, token: filer.token).status == .forbidden)
            #expect(try ReportRouteTests.count(fixture, "report_photo") == 0 && Self.pictures(fixture) == 0)
            #expect(try await client.get("/v1/photos/nothex.jpg").status == .badRequest)
        }
        var closed = ServerConfiguration()
        closed.maxPhotoUploads = 0
        try await fixture.test(configuration: closed) { client in
            let filer = try await ReportRouteTests.account(fixture, client, .inspector, 2)
            let id = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: filer.token).json["id"] as? Int)
            let busy = try await Self.upload(client, id, TestImages.jpeg(width: 64, height: 64), token: filer.token)
            #expect(busy.status == .serviceUnavailable && busy.headers[.retryAfter] == "5", "past the uploads in flight: \(busy.bodyText)")
            #expect(try ReportRouteTests.count(fixture, "report_photo") == 0)
        }
    }

    @Test("the same photo uploaded by 10 clients at once is stored once, one photo")
    func concurrentSame() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let filer = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let id = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: filer.token).json["id"] as? Int)
            let jpeg = TestImages.jpeg(width: 300, height: 200)
            let ids = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<10 { group.addTask { try await Self.upload(client, id, jpeg, token: filer.token).json["id"] as? Int } }
                return try await group.reduce(into: [Int?]()) { $0.append($1) }
            }
            #expect(Set(ids).count == 1 && ids[0] != nil)
            #expect(try ReportRouteTests.count(fixture, "report_photo") == 1 && Self.pictures(fixture) == 1)
        }
    }
}

/// Several photos in one `multipart/form-data` request.
@Suite("Photos over HTTP, several at once")
struct MultipartPhotoTests {
    static func multipart(_ files: [[UInt8]], boundary: String = "XyZ-boundary-42", named: Bool = true) -> [UInt8] {
        var body: [UInt8] = []
        for (i, file) in files.enumerated() {
            let disposition = named ? "form-data; name=\"files\"; filename=\"p\(i).jpg\"" : "form-data; name=\"note\""
            body += Array("--\(boundary)\r\nContent-Disposition: \(disposition)\r\nContent-Type: image/jpeg\r\n\r\n".utf8) + file + Array("\r\n".utf8)
        }
        return body + Array("--\(boundary)--\r\n".utf8)
    }

    @Test("two files in one request: both added; one bad among them: a 422 naming it, and nothing written; past 5: none")
    func several() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let filer = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let id = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: filer.token).json["id"] as? Int)
            let type = "multipart/form-data; boundary=XyZ-boundary-42"
            let two = try await PhotoRouteTests.upload(
                client, id, Self.multipart([TestImages.jpeg(width: 120, height: 90), TestImages.png(width: 50, height: 40)]), type: type, token: filer.token)
            #expect(two.status == .created, "\(two.bodyText)")
            #expect((two.json["photos"] as? [[String: Any]])?.compactMap { $0["width"] as? Int } == [120, 50])

            let bad = try await PhotoRouteTests.upload(
                client, id, Self.multipart([TestImages.jpeg(width: 70, height: 90), Array("GIF89a".utf8)]), type: type, token: filer.token)
            #expect(bad.status == .unprocessableContent && bad.error?["field"] as? String == "files[1]", "\(bad.bodyText)")
            let many = try await PhotoRouteTests.upload(
                client, id, Self.multipart((0..<4).map { TestImages.jpeg(width: 60 + $0, height: 60) }), type: type, token: filer.token)
            #expect(many.status == .unprocessableContent && many.error?["field"] as? String == "photos", "2 + 4 is past 5: \(many.bodyText)")
            #expect(try ReportRouteTests.count(fixture, "report_photo") == 2)

            let field = try await PhotoRouteTests.upload(client, id, Self.multipart([[1, 2, 3]], named: false), type: type, token: filer.token)
            #expect(field.status == .badRequest && field.error?["field"] as? String == "files[0]")
            let unclosed = try await PhotoRouteTests.upload(client, id, Array("--XyZ-boundary-42\r\n\r\nabc".utf8), type: type, token: filer.token)
            #expect(unclosed.status == .badRequest)
            let noBoundary = try await PhotoRouteTests.upload(client, id, [1], type: "multipart/form-data", token: filer.token)
            #expect(noBoundary.status == .unsupportedMediaType)
            #expect(try ReportRouteTests.count(fixture, "report_photo") == 2 && PhotoRouteTests.pictures(fixture) == 2)
        }
    }
}

@Suite("Multipart bodies")
struct MultipartFilesTests {
    @Test("the boundary search equals a brute force on random bytes, repetitive boundaries included")
    func search() {
        var rng = SplitMix64(state: 9)
        for _ in 0..<2_000 {
            let alphabet: [UInt8] = [45, 45, 45, 65, 13, 10]
            let haystack = (0..<rng.below(80)).map { _ in alphabet[rng.below(alphabet.count)] }
            let needle = (0..<(1 + rng.below(6))).map { _ in alphabet[rng.below(alphabet.count)] }
            let from = rng.below(max(haystack.count, 1))
            let brute = haystack.count < needle.count ? nil : (from...max(from, haystack.count - needle.count)).first { i in
                i + needle.count <= haystack.count && Array(haystack[i..<(i + needle.count)]) == needle
            }
            #expect(MultipartFiles.firstIndex(of: needle, in: haystack, from: from) == brute, "\(needle) in \(haystack) from \(from)")
        }
    }
}
