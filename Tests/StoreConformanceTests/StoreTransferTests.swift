import Accounts
import Backup
import Foundation
import Generator
import Geometry
import Photos
import PostgresStore
import ReportModel
import ReportService
import SQLiteStore
import StorePorts
import Testing
import TestSupport
import Webhooks

/// A city that started on SQLite moves to PostgreSQL and loses nothing: every table
/// compared row for row before and after, the photos byte for byte, and the moved city
/// answering as the old one did (a password, a token, a search, the change log).
@Suite("Moving a city from SQLite to PostgreSQL", .enabled(if: TestPostgres.url != nil))
struct StoreTransferTests {
    static let password = "кашта́н у дворі"

    /// A city with a row in every table the move carries.
    struct City {
        let directory: TemporaryDirectory
        let sqlite: SQLiteReports
        let photos: PhotoFiles
        let accounts: AccountService
        let service: ReportService
        var refreshToken = ""
        var reportIDs: [Int64] = []
    }

    static func city() async throws -> City {
        let directory = try TemporaryDirectory()
        let sqlite = try SQLiteReports(path: directory.path("city.sqlite"))
        let stores = Stores(reports: sqlite, accounts: SQLiteAccounts(sqlite), webhooks: SQLiteWebhooks(sqlite))
        let photos = try PhotoFiles(root: URL(fileURLWithPath: directory.path("photos")))
        let accounts = try await AccountService(storage: stores.accounts)
        let service = try await ReportService(storage: sqlite)
        var city = City(directory: directory, sqlite: sqlite, photos: photos, accounts: accounts, service: service)

        // Accounts, a rotated and an ended session, a revoked API key (account events).
        let (inspector, tokens) = try await accounts.register(name: "Інспектор", email: "i@example.org", phone: "067 000 00 01", password: Self.password)
        city.refreshToken = try await accounts.refresh(tokens.refreshToken).refreshToken
        let (_, other) = try await accounts.register(name: "Друга", email: "o@example.org", phone: "067 000 00 02", password: Self.password)
        let identity = try await accounts.authenticate(other.accessToken)
        try await accounts.endSession(identity.sessionID, of: identity)
        let supervisor = try await accounts.create(AccountDraft(name: "Наглядач", email: "s@example.org", phone: "067 000 00 03", password: Self.password, role: .supervisor))
        let key = try await accounts.createAPIKey(name: "operator sync")
        _ = try await accounts.createAPIKey(name: "gone")
        try await accounts.revokeAPIKey(key.key.id + 1)

        // A webhook before the writes, so that they queue deliveries; one attempted.
        let webhooks = WebhookService(storage: stores.webhooks)
        _ = try await webhooks.register(try WebhookDraft(url: "http://127.0.0.1:9/hook", events: ["report.created", "report.status_changed"], description: "операторові"))

        // Reports filed by the inspector, with an idempotency key, moved, hidden, with photos;
        // phones verified and blocked.
        let filer = Caller(accountID: inspector.id, role: .inspector), boss = Caller(accountID: supervisor.id, role: .supervisor)
        var rng = SplitMix64(state: 61)
        for i in 0..<40 {
            let draft = Drafts.make(Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng)
            if i == 0 {
                _ = try await service.file(draft, by: filer, key: "first", body: Data("body".utf8)) { filing in
                    StoredAnswer.Reply(status: 201, headers: ["Location": "/v1/reports/\(filing.report.id)"], body: Data("{}".utf8))
                }
                city.reportIDs.append(1)
            } else {
                city.reportIDs.append(try await service.file(draft, by: filer).report.id)
            }
        }
        let ids = city.reportIDs
        for id in ids.prefix(6) { _ = try await service.transition(id, to: "verifying", note: "перевіряємо", duplicateOf: nil, by: boss) }
        _ = try await service.hide(ids[7], note: "спам", by: boss)
        _ = try await service.addPhotos([TestImages.jpeg(width: 64, height: 48)], to: ids[1], by: filer, files: photos)
        _ = try await service.addPhotos([TestImages.jpeg(width: 40, height: 30, pixels: TestImages.quartered(width: 40, height: 30))], to: ids[2], by: filer, files: photos)
        // A report with one number, confirmed: the block moves it (and remembers it did).
        var single = Drafts.make(Coordinate(longitude: 30.52, latitude: 50.45), using: &rng)
        single.phones = ["380671112233"]
        let confirmed = try await service.file(single, by: filer).report.id
        _ = try await service.transition(confirmed, to: "verifying", note: nil, duplicateOf: nil, by: boss)
        _ = try await service.transition(confirmed, to: "confirmed", note: nil, duplicateOf: nil, by: boss)
        let phone = "380671112233"
        _ = try await service.verify(phone, outcome: .violator, note: "підтверджено", by: boss)
        _ = try await service.block(phone, note: "до операторів", by: boss)
        // An autodial campaign with a call answered and one in progress, then stopped.
        let campaign = try await service.startAutodial(phone, note: "дзвонимо", by: boss).campaign
        let now = Date()
        let answered = try await service.claimCall(CallClaim(campaignID: campaign.id, now: now, lastCallBy: now - 300, dayStart: now - 60, maxPerDay: 9, channels: 2, leaseUntil: now + 90)).get()
        try await service.finishCall(answered.id, CallResult(outcome: .answered, sipCode: 200, secondsPlayed: 4.5, reason: "end of file", endedAt: now + 6))
        _ = try await service.claimCall(CallClaim(campaignID: campaign.id, now: now + 400, lastCallBy: now + 100, dayStart: now - 60, maxPerDay: 9, channels: 2, leaseUntil: now + 490)).get()
        _ = try await service.stopAutodial(phone, note: nil, by: boss, now: now + 500)
        _ = try await service.markNotificationsRead(of: inspector.id, upTo: 2)
        // Assignments: one active, one reassigned (ended), one given back.
        let checker = Assignee(id: inspector.id, role: .inspector, disabled: false), lead = Assignee(id: supervisor.id, role: .supervisor, disabled: false)
        _ = try await service.assign(ids[10], to: checker, note: "перевір", by: boss)
        _ = try await service.assign(ids[11], to: checker, note: nil, by: boss)
        _ = try await service.assign(ids[11], to: lead, note: "сам", by: boss)
        _ = try await service.assign(ids[12], to: checker, note: nil, by: filer)
        _ = try await service.unassign(ids[12], note: nil, by: filer)

        let due = try await stores.webhooks.due(now: Date().addingTimeInterval(60), limit: 1)
        let claimed = try await stores.webhooks.claim(due, payloads: Dictionary(uniqueKeysWithValues: due.map { ($0.changeSeq, Data("{}".utf8)) }), until: Date().addingTimeInterval(30))
        try await stores.webhooks.record(
            claimed.map { AttemptOutcome(deliveryID: $0.id, webhookID: $0.webhookID, attempt: 1, at: Date(), status: 503, milliseconds: 12, state: .pending, retryAt: Date().addingTimeInterval(60)) },
            now: Date())
        return city
    }

    /// Every row of a table, as a store gives it, counted (order aside).
    static func rows(_ dump: any TableDump, _ table: String) async throws -> [[Cell]: Int] {
        var counts: [[Cell]: Int] = [:], offset = 0
        while true {
            let batch = try await dump.rows(of: table, offset: offset, limit: 500)
            for row in batch.rows { counts[row, default: 0] += 1 }
            if batch.rows.count < 500 { return counts }
            offset += batch.rows.count
        }
    }

    @Test("every table arrives row for row, the photos byte for byte; a second run writes nothing; the moved city signs in, takes the old tokens, and answers searches as before")
    func everyTable() async throws {
        let city = try await Self.city()
        let database = try TestPostgresDatabase()
        let target = try await PostgresStores(url: database.url)
        let transfer = StoreTransfer(
            source: city.sqlite, target: target.transfer, photoNames: { try await city.sqlite.photoNames() }, sourcePhotos: city.photos,
            targetPhotos: target.photos)
        var options = StoreTransfer.Options()
        options.batchSize = 7
        let summary = try await transfer.run(sourceName: "city.sqlite", options: options)
        #expect(summary.photos == 2 && summary.newPhotos == 2)

        for (table, _) in TransferTables.all {
            let before = try await Self.rows(city.sqlite, table), after = try await Self.rows(target.transfer, table)
            if table == "reference_data" {
                func reference(_ rows: [[Cell]: Int]) throws -> ReferenceData? {
                    guard case .text(let text)? = rows.keys.first?.first else { return nil }
                    return try JSONDecoder().decode(ReferenceData.self, from: Data(text.utf8))
                }
                #expect(try reference(before) == reference(after) && reference(before) != nil)
                continue
            }
            #expect(!before.isEmpty, "the city has rows of \(table) to move")
            #expect(before == after, "\(table): \(before.count) rows before, \(after.count) after")
        }
        for name in try await city.sqlite.photoNames() {
            for thumbnail in [false, true] {
                let moved = try await target.photos.read(sha256: name, thumbnail: thumbnail)
                #expect(moved != nil && moved == city.photos.read(name, thumbnail: thumbnail), "photo \(name)")
            }
        }

        let again = try await transfer.run(sourceName: "city.sqlite", options: options)
        #expect(again.newRows == 0 && again.newPhotos == 0, "a second run writes nothing twice")

        // The moved city: the same password signs in, the old refresh token still rotates
        // (its signing key and sessions moved), and searches answer as before.
        let accounts = try await AccountService(storage: target.stores.accounts)
        _ = try await accounts.login("i@example.org", password: Self.password, client: "test")
        _ = try await accounts.refresh(city.refreshToken)
        let moved = try await ReportService(storage: target.stores.reports)
        for q in ["067", "5", "12", String(city.reportIDs[9])] {
            #expect(try await moved.stored.search(q, limit: 100).reports.map(\.id) == city.service.stored.search(q, limit: 100).reports.map(\.id), "q=\(q)")
        }
        #expect(try await target.stores.reports.lastChange() == city.sqlite.lastChange())
    }

    @Test("a target that holds data of its own is refused, and left as it was")
    func refusesData() async throws {
        let city = try await Self.city()
        let database = try TestPostgresDatabase()
        let target = try await PostgresStores(url: database.url)
        _ = try await target.stores.accounts.createAccount(AccountStorageConformance.new(1, email: "own@example.org"), now: Date())
        let transfer = StoreTransfer(
            source: city.sqlite, target: target.transfer, photoNames: { try await city.sqlite.photoNames() }, sourcePhotos: city.photos,
            targetPhotos: target.photos)
        await #expect(throws: TargetHoldsData.self) { _ = try await transfer.run(sourceName: "city.sqlite") }
        #expect(try await Self.rows(target.transfer, "report").isEmpty)
        #expect(try await Self.rows(target.transfer, "account").count == 1)
    }
}
