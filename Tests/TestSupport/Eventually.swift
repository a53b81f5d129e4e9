import Testing

/// How long a test waits for what another task, process or server does before it gives up.
/// Long on purpose: under make test's load on two cores, what takes a second alone has
/// taken over a minute. A passing test never waits this long, so the length costs nothing,
/// and no test asserts how soon anything happens (the bench measures that).
public let patience = Duration.seconds(300)

/// Waits until `condition` holds, looking again every `interval`, for at most `limit`.
/// Giving up is recorded as an issue at the caller's line, naming `what`, so that a run's
/// failure says where it waited rather than only what the next expectation then found.
/// Returns whether the condition came to hold.
@discardableResult
public func eventually(
    _ what: @autoclosure () -> String = "the condition",
    limit: Duration = patience,
    every interval: Duration = .milliseconds(100),
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("waited \(limit) for \(what()) in vain", sourceLocation: sourceLocation)
            return false
        }
        try await Task.sleep(for: interval)
    }
    return true
}
