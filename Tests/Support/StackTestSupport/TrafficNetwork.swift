import BusTestSupport
import DBus
import Foundation
import Platform
import PrivateBusLauncher
#if canImport(Glibc)
import Glibc
#endif

/// The two network namespaces a traffic test makes (`NetworkNamespacePair`): a server at
/// 10.213.0.1 and fd00:213::1, a client at 10.213.0.2 and fd00:213::2 whose default routes go
/// through the veth, so the client's veth is the interface the traffic source counts. Deleted
/// when released, so also when a test fails.
public final class TrafficNetwork {
    public let pair: NetworkNamespacePair
    public var server: String { pair.server }
    public var client: String { pair.client }
    public static let serverAddress = "10.213.0.1"
    public static let clientAddress = "10.213.0.2"
    public static let serverAddress6 = "fd00:213::1"
    public static let clientAddress6 = "fd00:213::2"
    private static let counter = Locked(0)

    /// Why the real-traffic tests cannot run here, or nil when they can.
    public static var unavailable: String? {
        if getuid() != 0 { return "needs root: it makes network namespaces, a veth pair and cgroups" }
        for tool in ["ip", "nsenter", "curl", "python3", "setpriv"] where executablePath(for: tool) == nil {
            return "\(tool) is not installed (scripts/install-deps.sh installs it)"
        }
        if AppScope.cgroup2Mount == nil { return "no cgroup v2 hierarchy mounted" }
        return nil
    }

    public init() throws {
        let number = Self.counter.withLock { value in
            if value == 0 { NetworkNamespacePair.removeStale(prefix: "na-traffic") }
            value += 1
            return value
        }
        do {
            pair = try NetworkNamespacePair(prefix: "na-traffic", tag: "\(getpid())x\(number)", subnet: "10.213.0", prefix6: "fd00:213:")
        } catch {
            throw BusTestError(error.description)
        }
    }

    deinit { pair.remove() }

    /// `nsenter --net=…` arguments that run `command` in `namespace`.
    public func enter(_ namespace: String, _ command: [String]) -> [String] {
        pair.enter(namespace, command)
    }
}

/// A real cgroup v2 directory named as systemd names a desktop app's scope
/// (`app-gnome-ID-N.scope`), made beside the root cgroup and removed with whatever still runs in it.
public final class AppScope {
    public let path: String
    public let name: String

    public static let cgroup2Mount: String? = ProcFS().mounts().first { $0.type == "cgroup2" }?.mountPoint

    public init(desktopID: String) throws {
        guard let mount = Self.cgroup2Mount else { throw BusTestError("no cgroup2 mount") }
        name = "app-gnome-\(desktopID.replacingOccurrences(of: "-", with: "\\x2d"))-\(getpid())\(Int.random(in: 100...999)).scope"
        path = mount + "/" + name
        guard mkdir(path, 0o755) == 0 else { throw BusTestError("cannot make cgroup \(path): errno \(errno)") }
    }

    deinit {
        for _ in 0..<100 {
            let procs = (try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8)) ?? ""
            let pids = procs.split(separator: "\n").compactMap { Int32($0) }
            if pids.isEmpty, rmdir(path) == 0 || errno == ENOENT { return }
            for pid in pids { kill(pid, SIGKILL) }
            usleep(20_000)
        }
    }

    /// `sh -c` arguments that move the shell into this scope, then become `command`.
    public func run(_ command: [String]) -> [String] {
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return ["-c", "echo $$ > '\(path)/cgroup.procs' && exec \(quoted)"]
    }
}

/// A real cgroup v2 directory named as systemd names a system service's or a login session's
/// (`/system.slice/NAME.service`, `/user.slice/user-UID.slice/session-N.scope`), made with the
/// slices above it that are missing; removed, with what still runs in it and the slices it
/// made, when released.
public final class SystemdCgroup {
    /// The cgroup path, as `/proc/PID/cgroup` and the traffic source name it.
    public let cgroup: String
    /// Its directory under the cgroup2 mount.
    public let path: String
    /// The directories this made, outermost first.
    private var made: [String] = []

    public init(_ components: [String]) throws {
        guard let mount = AppScope.cgroup2Mount else { throw BusTestError("no cgroup2 mount") }
        cgroup = "/" + components.joined(separator: "/")
        var directory = mount
        var made: [String] = []
        for component in components {
            directory += "/" + component
            if mkdir(directory, 0o755) == 0 {
                made.append(directory)
            } else if errno != EEXIST || component == components.last {
                let error = errno
                for directory in made.reversed() { rmdir(directory) }
                throw BusTestError("cannot make cgroup \(directory): errno \(error)")
            }
        }
        path = directory
        self.made = made
    }

    deinit {
        for _ in 0..<100 {
            let procs = (try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8)) ?? ""
            let pids = procs.split(separator: "\n").compactMap { Int32($0) }
            if pids.isEmpty { break }
            for pid in pids { kill(pid, SIGKILL) }
            usleep(20_000)
        }
        removeMade()
    }

    /// Removes the directories made, innermost first; a slice another test still uses stays.
    private func removeMade() {
        for directory in made.reversed() { rmdir(directory) }
        made = []
    }

    /// `sh -c` arguments that move the shell into this cgroup, then become `command`.
    public func run(_ command: [String]) -> [String] {
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return ["-c", "echo $$ > '\(path)/cgroup.procs' && exec \(quoted)"]
    }
}

/// A small HTTP server in the server namespace that paces what it sends: `GET /BYTES/RATE`
/// answers BYTES bytes at RATE bytes a second (curl cannot pace a download: it reads ahead and
/// the kernel buffers megabytes); `GET /BYTES/RATE/FIRST` sends the first FIRST bytes at once,
/// unpaced; and any other request has its body read and answered empty.
/// It also counts UDP datagrams on port 443 (a QUIC stand-in) and drops them.
public final class PacingServer {
    public let process: ChildProcess

    public init(in network: TrafficNetwork) throws {
        process = try ChildProcess(
            "nsenter", network.enter(network.server, ["python3", "-c", Self.script, "8080"]))
        guard try process.readLine(timeout: .seconds(10)) == "ready" else {
            throw BusTestError("the pacing server did not start: \(process.stderrText)")
        }
    }

    deinit {
        process.send(signal: SIGKILL)
    }

    public static func url(bytes: Int, rate: Int, ipv6: Bool = false, unpacedFirst: Int? = nil) -> String {
        "http://\(ipv6 ? "[\(TrafficNetwork.serverAddress6)]" : TrafficNetwork.serverAddress):8080/\(bytes)/\(rate)"
            + (unpacedFirst.map { "/\($0)" } ?? "")
    }

    public static let script = #"""
        import socket, sys, threading, time
        def serve(conn):
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk: return
                    data += chunk
                head, _, rest = data.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                if method == "GET":
                    fields = [int(f) for f in path.split("/")[1:]]
                    size, rate, first = fields[0], fields[1], (fields[2] if len(fields) > 2 else 0)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
                    conn.sendall(b"x" * first)
                    # Never faster than RATE, even to catch up after a stall (a busy machine).
                    sent, due = first, time.monotonic()
                    while sent < size:
                        n = min(16384, size - sent)
                        conn.sendall(b"x" * n)
                        sent += n
                        due = max(due, time.monotonic()) + n / rate
                        delay = due - time.monotonic()
                        if delay > 0: time.sleep(delay)
                else:
                    length = 0
                    for line in lines[1:]:
                        if line.lower().startswith("content-length:"): length = int(line.split(":")[1])
                    if any(l.lower() == "expect: 100-continue" for l in lines[1:]):
                        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    got = len(rest)
                    while got < length:
                        chunk = conn.recv(65536)
                        if not chunk: return
                        got += len(chunk)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        def udp():
            sink = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            sink.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sink.bind(("::", 443))
            while True: sink.recv(65536)
        threading.Thread(target=udp, daemon=True).start()
        # Both families on one socket: the namespace has no address but the test's.
        server = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("::", int(sys.argv[1])))
        server.listen(16)
        print("ready", flush=True)
        while True:
            conn, _ = server.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """#

    /// A QUIC stand-in: a UDP socket connected to the server's port 443 sending `rate` bytes a
    /// second for `seconds`.
    public static let udpSender = #"""
        import socket, sys, time
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((sys.argv[1], 443))
        rate, seconds = int(sys.argv[2]), float(sys.argv[3])
        start = due = time.monotonic()
        while time.monotonic() - start < seconds:
            s.send(b"q" * 1200)
            due = max(due, time.monotonic()) + 1200 / rate
            delay = due - time.monotonic()
            if delay > 0: time.sleep(delay)
        """#
}
