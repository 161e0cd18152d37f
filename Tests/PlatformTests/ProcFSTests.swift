import BusTestSupport
import Foundation
import Platform
import Testing

/// `ProcFS` under a tree a test makes like `/proc`: every reader takes its root, so what the
/// code learns from `/proc` tests without the real one.
@Suite struct ProcFSTests {
    /// A made-up `/proc`: two processes of users 1000 and 0, each with a status, a cgroup, a
    /// command line and descriptors, and this process's mountinfo.
    final class Tree {
        let root: String
        init() throws {
            root = try temporaryDirectory()
            try process(4242, uid: 1000, parent: 1, cgroup: "/user.slice/user-1000.slice/app-gnome-firefox\\x2desr-4242.scope",
                        commandLine: "/usr/lib/firefox-esr/firefox-esr\0--new-window\0", sockets: [77, 78])
            try process(17, uid: 0, parent: 1, cgroup: "/system.slice/apt-daily.service", commandLine: "apt-get\0update\0", sockets: [90])
            try FileManager.default.createDirectory(atPath: root + "/self", withIntermediateDirectories: true)
            try write(
                "self/mountinfo",
                "22 1 8:1 / / rw - ext4 /dev/vda rw\n35 22 0:30 / /sys/fs/cgroup\\040v2 rw - cgroup2 cgroup2 rw\n")
            try FileManager.default.createDirectory(atPath: root + "/not-a-process", withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: root) }

        func write(_ path: String, _ text: String) throws {
            try text.write(toFile: root + "/" + path, atomically: false, encoding: .utf8)
        }

        func process(_ pid: UInt32, uid: UInt32, parent: UInt32, cgroup: String, commandLine: String, sockets: [UInt32]) throws {
            let directory = root + "/\(pid)"
            try FileManager.default.createDirectory(atPath: directory + "/fd", withIntermediateDirectories: true)
            try write("\(pid)/status", "Name:\tx\nPPid:\t\(parent)\nUid:\t\(uid)\t\(uid)\t\(uid)\t\(uid)\n")
            try write("\(pid)/cgroup", "0::\(cgroup)\n")
            try write("\(pid)/cmdline", commandLine)
            for (index, inode) in sockets.enumerated() {
                try FileManager.default.createSymbolicLink(atPath: directory + "/fd/\(index + 3)", withDestinationPath: "socket:[\(inode)]")
            }
            try FileManager.default.setAttributes([.ownerAccountID: uid], ofItemAtPath: directory)
        }
    }

    @Test func processesAndWhatTheirFilesSay() throws {
        let tree = try Tree()
        let proc = ProcFS(root: tree.root)
        #expect(Set(proc.processIDs()) == [4242, 17], "only numbered directories are processes")
        #expect(proc.owner(of: 4242) == 1000)
        #expect(proc.owner(of: 17) == 0)
        #expect(proc.statusField("PPid:", of: 4242) == 1)
        #expect(proc.statusField("Uid:", of: 4242) == 1000)
        #expect(proc.statusField("Gid:", of: 4242) == nil)
        #expect(proc.cgroup(of: 17) == "/system.slice/apt-daily.service")
        #expect(proc.contents("cmdline", of: 17, limit: 4096) == Array("apt-get\0update\0".utf8))
        #expect(proc.contents("cmdline", of: 17, limit: 3) == Array("apt".utf8))
        #expect(Set(proc.descriptors(of: 4242)) == [3, 4])
        #expect(proc.target(ofDescriptor: 3, of: 4242) == "socket:[77]")
        #expect(proc.target(ofDescriptor: 9, of: 4242) == nil)
    }

    @Test func aProcessThatIsGoneIsUnknown() throws {
        let tree = try Tree()
        let proc = ProcFS(root: tree.root)
        #expect(proc.owner(of: 99) == nil)
        #expect(proc.statusField("PPid:", of: 99) == nil)
        #expect(proc.cgroup(of: 99) == nil)
        #expect(proc.contents("cmdline", of: 0, limit: 100) == nil, "pid 0 is no process")
        #expect(proc.descriptors(of: 99).isEmpty)
    }

    @Test func mountsWithTheirEscapesUndone() throws {
        let tree = try Tree()
        let mounts = ProcFS(root: tree.root).mounts()
        #expect(mounts == [
            ProcFS.Mount(root: "/", mountPoint: "/", type: "ext4"),
            ProcFS.Mount(root: "/", mountPoint: "/sys/fs/cgroup v2", type: "cgroup2"),
        ])
        #expect(ProcFS.mounts(in: "garbage\n1 2 3\n").isEmpty)
    }

    @Test func theRealProcOfThisProcess() throws {
        let proc = ProcFS()
        let me = UInt32(getpid())
        #expect(proc.processIDs().contains(me))
        #expect(proc.owner(of: me) == getuid())
        #expect(proc.statusField("PPid:", of: me) == UInt32(getppid()))
        #expect(proc.mounts().contains { $0.mountPoint == "/" })
        #expect(!proc.descriptors(of: nil).isEmpty)
    }
}

/// Files, links and directories by path, and the clocks.
@Suite struct FileSystemTests {
    @Test func contentsUpToALimitAndNothingForAnEmptyOrMissingFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = String(repeating: "0123456789", count: 3_000)
        try text.write(toFile: directory + "/big", atomically: false, encoding: .utf8)
        #expect(FileSystem.contents(of: directory + "/big", limit: 1 << 20) == Array(text.utf8))
        #expect(FileSystem.contents(of: directory + "/big", limit: 10_000) == Array(text.utf8.prefix(10_000)))
        #expect(FileSystem.contents(of: directory + "/big", limit: 5) == Array(text.utf8.prefix(5)))
        try "".write(toFile: directory + "/empty", atomically: false, encoding: .utf8)
        #expect(FileSystem.contents(of: directory + "/empty", limit: 100) == nil)
        #expect(FileSystem.contents(of: directory + "/missing", limit: 100) == nil)
        #expect((FileSystem.contents(of: "/proc/self/status", limit: 1 << 20)?.count ?? 0) > 100, "a /proc file of no size")
    }

    @Test func directoryEntriesWithoutTheDotsAndTheirKinds() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/sub", withIntermediateDirectories: false)
        try "x".write(toFile: directory + "/file ünï", atomically: false, encoding: .utf8)
        let entries = try #require(Directory.entries(of: directory))
        #expect(Set(entries.map(\.name)) == ["sub", "file ünï"])
        #expect(entries.first { $0.name == "sub" }?.isDirectory == true)
        #expect(entries.first { $0.name != "sub" }?.isDirectory == false)
        #expect(Directory.entries(of: directory, limit: 1)?.count == 1)
        #expect(Directory.entries(of: directory + "/missing") == nil)
    }

    @Test func linksAndStatus() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createSymbolicLink(atPath: directory + "/link", withDestinationPath: "socket:[12]")
        #expect(FileSystem.destination(ofLink: directory + "/link") == "socket:[12]")
        #expect(FileSystem.destination(ofLink: directory) == nil, "no link")
        #expect(FileSystem.status(of: directory)?.owner == getuid())
        #expect(FileSystem.exists(directory) && !FileSystem.exists(directory + "/missing"))
    }

    @Test func aDescriptorWritesAndReadsWholeAndSaysWhyItCannotOpen() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        let file = try FileDescriptor.open(directory + "/file", flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
        try file.write(bytes)
        file.close()
        let reader = try FileDescriptor.open(readOnly: directory + "/file")
        defer { reader.close() }
        #expect(try reader.readAll(limit: 1 << 20) == bytes)
        #expect(throws: Errno.noSuchFile) { try FileDescriptor.open(readOnly: directory + "/missing") }
        #expect(Errno.noSuchFile.description == "No such file or directory")
        #expect(ProcFS().executable(of: nil)?.hasSuffix("xctest") == true)
    }

    @Test func theClocks() {
        let first = Clocks.monotonicNanoseconds()
        #expect(Clocks.monotonicNanoseconds() >= first)
        let wall = Clocks.wallMicroseconds()
        #expect(wall > 1_700_000_000_000_000, "after 2023")
    }
}
