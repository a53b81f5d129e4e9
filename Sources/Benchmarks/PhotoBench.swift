import Accounts
import CJPEG
import Dispatch
import Foundation
import Geometry
import Photos
import ReportService
import SQLiteStore

/// A camera photo (4000×3000 JPEG) processed into its stored picture and thumbnail, on
/// one core, beside ImageMagick doing the stored picture alone with
/// `convert -auto-orient -strip -resize 2048x2048 -quality 85` (the peer to beat).
struct PhotoBench {
    let runs = 20

    /// A 4000×3000 picture with what makes a photo costly to code: smooth light and fine
    /// detail (a gradient under seeded noise), as a camera JPEG at quality 92.
    static func cameraJPEG() -> [UInt8] {
        let (width, height) = (4000, 3000)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var state: UInt64 = 42
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let noise = Int(state >> 59) - 16
                let i = (y * width + x) * 3
                pixels[i] = UInt8(clamping: x * 255 / width + noise)
                pixels[i + 1] = UInt8(clamping: y * 255 / height + noise)
                pixels[i + 2] = UInt8(clamping: 128 + (x ^ y) % 64 + noise)
            }
        }
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 200)
        _ = pixels.withUnsafeBufferPointer { cjpeg_encode($0.baseAddress, Int32(width), Int32(height), 92, 1, &out, &size, &message) }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// ImageMagick's `convert`, when this machine has the real one.
    static func imageMagick() -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["convert", "-version"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        guard (try? process.run()) != nil else { return nil }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.hasPrefix("Version: ImageMagick") ? String(text.prefix { $0 != "\n" }) : nil
    }
}

extension Bench {
    func measurePhotos(_ report: inout Report) async throws {
        let bench = PhotoBench()
        let upload = PhotoBench.cameraJPEG()
        var processor = PhotoProcessor()
        var stored = 0, optimizedStored = 0
        let ours = try await samples(Array(0..<bench.runs)) { _ in stored = try processor.process(upload).image.count }
        processor.optimizedTables = true
        let optimized = try await samples(Array(0..<bench.runs)) { [processor] _ in optimizedStored = try processor.process(upload).image.count }
        report.section(
            "Photos: a 4000×3000 camera JPEG (\(fmt(upload.count)) bytes) to its stored picture (≤ 2048 px, quality 85, no metadata) and thumbnail, one core, \(bench.runs) runs",
            header: ["what", "p50 (ms)", "p99 (ms)"])
        report.row(["PosterWatch (`PhotoProcessor`: DCT-scaled decode, orientation, encode, thumbnail; \(fmt(stored)) bytes stored)", f2(ours.p50), f2(ours.p99)])
        report.row(["… the stored picture with Huffman tables made for it (`optimizedTables`; \(fmt(optimizedStored)) bytes stored)", f2(optimized.p50), f2(optimized.p99)])
        report.goal("a 12-megapixel photo to stored image and thumbnail: p50 ≤ 60 ms", "\(f2(ours.p50)) ms", ours.p50 <= 60)
        report.note("Standard tables over made ones, p50: \(f2(optimized.p50 / ours.p50))× faster for \(f1(Double(stored - optimizedStored) / Double(optimizedStored) * 100))% more bytes.")
        guard let version = PhotoBench.imageMagick() else {
            report.note("ImageMagick is not installed here (`make bench` installs Debian's `imagemagick`): no peer row.")
            return
        }
        let input = "\(work)/camera.jpg", output = "\(work)/camera-im.jpg"
        try Data(upload).write(to: URL(fileURLWithPath: input))
        let peer = try await samples(Array(0..<bench.runs)) { _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["convert", input, "-auto-orient", "-strip", "-resize", "2048x2048", "-quality", "85", output]
            process.environment = ["MAGICK_THREAD_LIMIT": "1", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
            try process.run()
            process.waitUntilExit()
        }
        report.row(["ImageMagick `convert -auto-orient -strip -resize 2048x2048 -quality 85` (one thread, the stored picture only, process start included; \(version))", f2(peer.p50), f2(peer.p99)])
        report.note("PosterWatch over ImageMagick, p50: \(f2(peer.p50 / ours.p50))× faster, with the thumbnail made too.")
    }
}

extension Bench {
    /// Photo uploads over HTTP (the camera JPEG, 16 connections) while cluster viewports
    /// are read: the upload's decoding and encoding share the cores with everything else.
    /// A server for each number of photo workers, one and every core.
    func measureUploads(_ store: SQLiteReports, _ report: inout Report) async throws {
        let file = "\(work)/camera.jpg"
        try Data(PhotoBench.cameraJPEG()).write(to: URL(fileURLWithPath: file))
        let id = try await store.pool.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM report LIMIT 1") } ?? 1
        let upload = [WrkRequest(method: "POST", path: "/v1/reports/\(id)/photos", bodyFile: file, contentType: "image/jpeg")]
        func box(_ b: BoundingBox) -> String { "\(b.west),\(b.south),\(b.east),\(b.north)" }
        report.section(
            "Photo uploads over HTTP: the 4000×3000 JPEG posted by 16 connections (one picture, so stored once: each upload decoded and encoded all the same) while wrk reads z14 cluster viewports, by photo workers (`serve --photo-workers`)",
            header: ["what", "per second", "p50 (ms)", "p99 (ms)"])
        let cores = ProcessInfo.processInfo.activeProcessorCount
        for workers in Set([ReportService.defaultPhotoWorkers, cores]).sorted() {
            let service = try await ReportService(storage: store, photoWorkers: workers)
            let accounts = try await AccountService(storage: SQLiteAccounts(store))
            let (port, server) = try await startServer(service, accounts: accounts, store: store)
            defer { server.cancel() }
            let supervisors = try await benchTokens(accounts, role: .supervisor)
            let uploads = try startWrk(port: port, lists: [upload], bearerTokens: [supervisors[0]], threads: 1, connections: 16, seconds: 12, name: "wrk-photos")
            try await Task.sleep(for: .seconds(1))
            let clusters = try wrk(port: port, paths: kyivViewports(zoom: 14, seed: 33).map { "/v1/clusters?bbox=\(box($0))&zoom=14" })
            let photos = try uploads()
            let which = workers == ReportService.defaultPhotoWorkers ? "the default" : "every core"
            report.row(["`POST /v1/reports/{id}/photos`, \(workers) photo worker\(workers == 1 ? "" : "s") (\(which))", f1(photos.rate), f2(photos.p50), f2(photos.p99)])
            report.row(["`/v1/clusters` z14 viewports meanwhile", fmt(Int(clusters.rate)), f2(clusters.p50), f2(clusters.p99)])
            report.goal(
                "photo uploads over HTTP, 16 connections, \(workers) photo worker\(workers == 1 ? "" : "s"): ≥ 30 photos/s while /v1/clusters ≥ 3,000 requests/s",
                "\(f1(photos.rate))/s beside \(fmt(Int(clusters.rate))) cluster requests/s", photos.rate >= 30 && clusters.rate >= 3_000 && photos.failures == 0)
        }
    }
}
