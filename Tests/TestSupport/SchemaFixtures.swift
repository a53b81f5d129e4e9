import Foundation

/// Databases made by releases of PosterWatch, kept in `Tests/Fixtures`, so that every
/// later schema change is tested against them (`MigrationTests`). They are made by
/// `MigrationTests.writeFixtures` (`POSTERWATCH_WRITE_FIXTURES=1 swift test --filter writeFixtures`)
/// and never changed once committed; a new release adds its own.
public enum SchemaFixtures {
    /// The folder of the fixtures, in the source tree.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// `schema-v6.sqlite`: the schema through "v6: report photos", as the release before
    /// the phones had it; `schema-v7.sqlite`: the current release's.
    public static func url(_ name: String) -> URL { folder.appendingPathComponent(name) }
}
