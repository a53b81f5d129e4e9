@testable import ReportService
import StorePorts
import Testing

/// The rules by which what a service has followed of the change log moves
/// (``FollowedChange``), each case one that a race between the group commit and the
/// catch-ups can produce.
@Suite("What has been followed of the change log")
struct FollowedChangeTests {
    @Test("own numbers that follow on move it; with another writer's between, or none, they do not")
    func ownNumbers() {
        let followed = FollowedChange(10)
        followed.advance(passes: [], own: ChangeNumbers(after: 10, through: 14), replaced: false)
        #expect(followed.change == 14)
        followed.advance(passes: [], own: ChangeNumbers(after: 16, through: 17), replaced: false)
        #expect(followed.change == 14, "15 and 16 are another writer's, not read yet")
        followed.advance(passes: [], own: nil, replaced: false)
        #expect(followed.change == 14 && !followed.takeLogWentBack())
    }

    @Test("a pass that read on from it moves it, and own numbers of the same transaction that follow on from the pass count too")
    func passes() {
        let followed = FollowedChange(14)
        followed.advance(passes: [.init(from: 14, through: 16)], own: ChangeNumbers(after: 16, through: 18), replaced: false)
        #expect(followed.change == 18)
        followed.advance(passes: [.init(from: 12, through: 15)], own: nil, replaced: false)
        #expect(followed.change == 18, "never back")
    }

    @Test("a pass that began before a rebuild set it back counts for nothing, nor one in the rebuild's own transaction")
    func stalePasses() {
        let followed = FollowedChange(20)
        followed.reset(to: 12)  // a restore: the rows were read at 12
        followed.advance(passes: [.init(from: 20, through: 25)], own: nil, replaced: false)
        #expect(followed.change == 12, "it read after 20: 13 to 20 were never read")
        followed.reset(to: 30)  // an import: the rebuilt index holds the rows at 30
        followed.advance(passes: [.init(from: 12, through: 40)], own: ChangeNumbers(after: 30, through: 31), replaced: true)
        #expect(followed.change == 31, "the pass was reconciled against the index replaced; the own numbers follow on from the rows")
    }

    @Test("own numbers starting below it mean the log went back: kept for the next catch-up, once")
    func logWentBack() {
        let followed = FollowedChange(20)
        followed.advance(passes: [], own: ChangeNumbers(after: 12, through: 13), replaced: false)
        #expect(followed.change == 20)
        #expect(followed.takeLogWentBack() && !followed.takeLogWentBack())
    }
}
