import BusTestSupport
import Foundation
import StackTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Real byte counts: packagekitd's apt backend downloads a package from a repository served on
/// 127.0.0.1 (at about 1 MB/s, so the download lasts seconds), and the bridge reports the bytes
/// `DownloadSizeRemaining` gives.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .serialized, .enabled(if: PackageKitDaemon.unavailable == nil, "\(PackageKitDaemon.unavailable ?? "")"))
struct PackageKitAptTests {
    @Test func aDownloadReportsItsBytes() throws {
        let repository = try LocalRepository(payloadBytes: 3_000_000)
        defer { repository.stop() }
        let packageKit = try PackageKitDaemon(
            backend: .apt(sources: "deb [trusted=yes] http://127.0.0.1:\(repository.port)/ ./\n"))
        let refresh = try packageKit.pkcon(["refresh", "force"]).waitForExit(timeout: .seconds(30))
        #expect(refresh.exitStatus == 0, "\(refresh) \(packageKit.log)")
        let bridge = try BridgeUnderTest(packageKit)
        let destination = packageKit.directory + "/downloaded"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        let pkcon = try packageKit.pkcon(["download", destination, LocalRepository.package], inItsNamespace: true)

        let activity = try bridge.waitForActivity("bytes under way", timeout: .seconds(30)) {
            $0.completed > 0 && $0.completed < $0.total
        }
        #expect(activity.label == "Downloading packages")
        #expect(activity.kind == "download")
        #expect(activity.total == repository.packageBytes, "the total is the package's size")
        let result = try pkcon.waitForExit(timeout: .seconds(30))
        #expect(result.exitStatus == 0, "\(result)")
        try bridge.waitUntilNoActivity("the download's activity to end")
        #expect(FileManager.default.fileExists(atPath: destination + "/" + repository.packageFile))
    }
}

/// A one-package apt repository (a flat `Packages` index beside the `.deb`), served over HTTP
/// on 127.0.0.1 by Python's `http.server`, slowed to about 1 MB/s.
struct LocalRepository {
    static let package = "netactivity-payload"
    let directory: String
    let packageFile = "netactivity-payload_1.0_all.deb"
    let packageBytes: UInt64
    let port: Int
    private let server: ChildProcess

    init(payloadBytes: Int) throws {
        directory = NSTemporaryDirectory() + "netactivity-repo-" + UUID().uuidString.prefix(8)
        let tree = directory + "/tree"
        try FileManager.default.createDirectory(atPath: tree + "/DEBIAN", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: tree + "/usr/share/\(Self.package)", withIntermediateDirectories: true)
        try """
            Package: \(Self.package)
            Version: 1.0
            Architecture: all
            Maintainer: NetActivity tests <tests@example.invalid>
            Description: a payload the bridge's tests download

            """.write(toFile: tree + "/DEBIAN/control", atomically: true, encoding: .utf8)
        // Random bytes: nothing for gzip to shrink, so the package is as large as asked.
        guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else { throw BusTestError("no /dev/urandom") }
        try random.readData(ofLength: payloadBytes).write(to: URL(fileURLWithPath: tree + "/usr/share/\(Self.package)/blob"))
        let repository = directory + "/repository"
        try FileManager.default.createDirectory(atPath: repository, withIntermediateDirectories: true)
        let built = try run("dpkg-deb", ["-Zgzip", "--build", tree, repository + "/" + packageFile])
        guard built.succeeded else { throw BusTestError("dpkg-deb failed: \(built)") }
        let attributes = try FileManager.default.attributesOfItem(atPath: repository + "/" + packageFile)
        packageBytes = (attributes[.size] as? NSNumber)?.uint64Value ?? 0
        let sum = try run("sha256sum", [repository + "/" + packageFile])
        guard sum.succeeded, let hash = sum.stdout.split(separator: " ").first else {
            throw BusTestError("sha256sum failed: \(sum)")
        }
        try """
            Package: \(Self.package)
            Version: 1.0
            Architecture: all
            Maintainer: NetActivity tests <tests@example.invalid>
            Filename: ./\(packageFile)
            Size: \(packageBytes)
            SHA256: \(hash)
            Description: a payload the bridge's tests download

            """.write(toFile: repository + "/Packages", atomically: true, encoding: .utf8)
        server = try ChildProcess("/usr/bin/python3", ["-c", slowServer, repository])
        guard let line = try server.readLine(timeout: .seconds(10)), let port = Int(line) else {
            throw BusTestError("the repository's server printed no port: \(server.stderrText)")
        }
        self.port = port
    }

    func stop() {
        server.send(signal: SIGTERM)
        _ = try? server.waitForExit(timeout: .seconds(5))
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Serves the directory argv[1] on 127.0.0.1 (a free port, printed first) at about 1 MB/s.
private let slowServer = #"""
    import sys, os, time, http.server
    os.chdir(sys.argv[1])
    class Slow(http.server.SimpleHTTPRequestHandler):
        def copyfile(self, source, destination):
            while True:
                chunk = source.read(100000)
                if not chunk:
                    break
                destination.write(chunk)
                destination.flush()
                time.sleep(0.1)
        def log_message(self, *arguments):
            pass
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Slow)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """#
