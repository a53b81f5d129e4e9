import CProj
import Geometry
import Synchronization

/// Turns WGS84 longitude/latitude into coordinates of another CRS, through PROJ.
///
/// The transformation is PROJ's `proj_create_crs_to_crs(EPSG:4326 → target)`, normalized
/// for visualization: input is always longitude, latitude and output is always
/// easting, northing (x, y), or longitude, latitude for a geographic target, whatever
/// axis order the EPSG definition has (EPSG:6384 and EPSG:4326 list northing/latitude
/// first). Where the target needs a datum shift, PROJ picks per point the most accurate
/// operation whose area of use contains it. PROJ works offline: network access (grid
/// downloads) is switched off and only the installed `proj.db` is used.
///
/// For CRS84 and EPSG:4326 no PROJ object is made at all: coordinates pass through.
///
/// **Threads.** A PROJ context and its transformation may not be used by two threads at
/// once, so each Reprojector owns its own context and takes a lock (a `Mutex`) around
/// every use. That makes it `Sendable` with no unchecked promise: one instance may be
/// shared by any number of tasks and each gets the right answer. The lock is taken once
/// per call, so the batch form ``project(_:)-([Coordinate])`` costs one lock for the
/// whole batch. Tasks sharing one instance run their projections one at a time; a
/// stream that wants its own throughput makes its own Reprojector (creating one costs a
/// few milliseconds of `proj.db` look-ups).
///
/// **Failures.** A point PROJ cannot project (it answers `HUGE_VAL`, e.g. a longitude 90°
/// from a UTM zone's meridian) comes back as `(x: .nan, y: .nan)`, in both forms, so a
/// batch keeps one result per input. Writers check `x.isFinite`.
///
/// ```swift
/// let reprojector = try Reprojector(to: CRS(parsing: "EPSG:6384"))
/// let (x, y) = reprojector.project(Coordinate(longitude: 30.5234, latitude: 50.4501))
/// // x ≈ 337290.892, y ≈ 5591157.510 (metres, UCS-2000 / Ukraine TM zone 10)
/// let rows = reprojector.project(coordinates)              // one PROJ call for the batch
/// let text = String(format: "%.\(reprojector.decimals)f", x)
/// ```
public final class Reprojector: Sendable {
    /// The CRS the coordinates are projected to.
    public let target: CRS
    /// PROJ's name for the target, e.g. `UCS-2000 / Ukraine TM zone 10`.
    public let name: String
    /// How many decimals a writer should keep: 6 for degrees (about 0.1 m), 3 for
    /// projected units (millimetres for metres).
    public let decimals: Int
    /// Whether the target is a projected CRS (x, y in linear units) rather than a
    /// geographic one (longitude, latitude in degrees).
    public let isProjected: Bool

    private let transform: Mutex<Transform>

    /// Prepares the transformation from WGS84 to `target`.
    ///
    /// Throws a ``ValidationError`` on field `crs` when PROJ does not know the code
    /// (`unknown CRS EPSG:12345`), when it names a CRS that is not 2D-projectable
    /// (geocentric, vertical, compound, …) or when PROJ has no operation to it.
    public init(to target: CRS) throws {
        self.target = target
        guard let code = target.epsgCode, !target.isWGS84LonLat else {
            name = target.epsgCode == nil ? "WGS 84 (CRS84)" : "WGS 84"
            decimals = 6
            isProjected = false
            transform = Mutex(Transform(context: nil, operation: nil))
            return
        }
        guard let context = proj_context_create() else {
            throw ReprojectionUnavailable(reason: "PROJ could not create a context for \(target)")
        }
        // From here on `owner` frees the context (and the operation once it is set).
        var owner = Transform(context: context, operation: nil)
        proj_log_level(context, PJ_LOG_NONE)  // errors are reported as ValidationErrors, not on stderr
        proj_context_set_enable_network(context, 0)
        guard proj_context_get_database_path(context) != nil else {
            throw ReprojectionUnavailable(reason: "PROJ cannot open its database proj.db (install proj-data or set PROJ_DATA), so \(target) cannot be used")
        }
        let made = try Self.operation(in: context, to: code, target: target)
        owner.operation = made.operation
        name = made.name
        isProjected = made.isProjected
        decimals = isProjected ? 3 : 6
        transform = Mutex(owner)
    }

    /// The position in the target CRS: easting, northing (or longitude, latitude for a
    /// geographic target); `(.nan, .nan)` when PROJ cannot project it.
    public func project(_ c: Coordinate) -> (x: Double, y: Double) {
        transform.withLock { t in
            guard let operation = t.operation else { return (c.longitude, c.latitude) }
            let out = proj_trans(operation, PJ_FWD, proj_coord(c.longitude, c.latitude, 0, 0))
            return Self.checked(out.xy.x, out.xy.y)
        }
    }

    /// ``project(_:)-(Coordinate)`` for many positions at once, in order, with one lock
    /// and one `proj_trans_generic` call. Equal, point for point, to the single form.
    /// (PROJ 9.1 still transforms point by point inside that call, so per point it costs
    /// about what the single form does: 0.13–0.5 µs; batches of some thousands keep the
    /// lock short for other users of the same instance.)
    public func project(_ coordinates: [Coordinate]) -> [(x: Double, y: Double)] {
        transform.withLock { t in
            guard let operation = t.operation else { return coordinates.map { ($0.longitude, $0.latitude) } }
            let n = coordinates.count
            var xy = [Double](repeating: 0, count: 2 * n)
            for (i, c) in coordinates.enumerated() {
                xy[2 * i] = c.longitude
                xy[2 * i + 1] = c.latitude
            }
            let stride = 2 * MemoryLayout<Double>.stride
            xy.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                _ = proj_trans_generic(operation, PJ_FWD, base, stride, n, base + 1, stride, n, nil, 0, 0, nil, 0, 0)
            }
            return (0..<n).map { i in Self.checked(xy[2 * i], xy[2 * i + 1]) }
        }
    }

    /// The inverse: WGS84 longitude/latitude of a position given in the target CRS
    /// (NaN, NaN when PROJ cannot invert it). For round trips and for boxes given in
    /// the target CRS.
    public func unproject(x: Double, y: Double) -> Coordinate {
        transform.withLock { t in
            guard let operation = t.operation else { return Coordinate(longitude: x, latitude: y) }
            let out = proj_trans(operation, PJ_INV, proj_coord(x, y, 0, 0))
            let (lon, lat) = Self.checked(out.xy.x, out.xy.y)
            return Coordinate(longitude: lon, latitude: lat)
        }
    }

    /// Where PROJ reads its database (`proj.db`) on this machine; nil when it finds none.
    public static var databasePath: String? {
        guard let context = proj_context_create() else { return nil }
        defer { proj_context_destroy(context) }
        proj_log_level(context, PJ_LOG_NONE)
        return proj_context_get_database_path(context).map { String(cString: $0) }
    }

    /// The linked PROJ release, e.g. `9.1.1`.
    public static var projVersion: String {
        let info = proj_info()
        return info.version.map { String(cString: $0) } ?? "\(info.major).\(info.minor).\(info.patch)"
    }

    /// EPSG:4326 → EPSG:`code`, normalized to lon/lat in and x/y out, made in `context`;
    /// the intermediate CRS objects are freed before this returns.
    private static func operation(in context: OpaquePointer, to code: Int, target: CRS) throws(ValidationError)
        -> (operation: OpaquePointer, name: String, isProjected: Bool)
    {
        guard let crs = proj_create(context, "EPSG:\(code)") else {
            throw ValidationError(field: "crs", "unknown CRS \(target)")
        }
        defer { proj_destroy(crs) }
        let type = proj_get_type(crs)
        guard proj_is_crs(crs) != 0,
              [PJ_TYPE_PROJECTED_CRS, PJ_TYPE_GEOGRAPHIC_2D_CRS, PJ_TYPE_GEOGRAPHIC_3D_CRS].contains(type)
        else {
            throw ValidationError(field: "crs", "\(target) is not a projected or geographic CRS; only those can be exported")
        }
        guard let source = proj_create(context, "EPSG:4326") else {
            throw ValidationError(field: "crs", "PROJ does not know EPSG:4326, so \(target) cannot be used")
        }
        defer { proj_destroy(source) }
        guard let raw = proj_create_crs_to_crs_from_pj(context, source, crs, nil, nil) else {
            throw ValidationError(field: "crs", "PROJ has no transformation from EPSG:4326 to \(target)")
        }
        defer { proj_destroy(raw) }
        guard let normalized = proj_normalize_for_visualization(context, raw) else {
            throw ValidationError(field: "crs", "PROJ cannot put \(target) in easting, northing order")
        }
        let name = proj_get_name(crs).map { String(cString: $0) } ?? target.identifier
        return (normalized, name, type == PJ_TYPE_PROJECTED_CRS)
    }

    private static func checked(_ x: Double, _ y: Double) -> (x: Double, y: Double) {
        x.isFinite && y.isFinite ? (x, y) : (.nan, .nan)
    }
}

/// The PROJ context and transformation of one ``Reprojector``, freed together. Only ever
/// touched under the Reprojector's lock; noncopyable, so it has exactly one owner.
private struct Transform: ~Copyable {
    let context: OpaquePointer?
    var operation: OpaquePointer?

    deinit {
        if let operation { proj_destroy(operation) }
        if let context { proj_context_destroy(context) }
    }
}

/// PROJ itself cannot work on this machine (no context, no database): a fault of the
/// deployment, not of the request, so the server answers it with a 500 and logs why.
public struct ReprojectionUnavailable: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
