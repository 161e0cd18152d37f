import BusTestSupport
import DBus
import Foundation
import NetActivityTestSupport
import StackTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the PackageKit source makes of input the real packagekitd never sends: signals forged by
/// another connection, and an owner of `org.freedesktop.PackageKit` that sends wrong types,
/// 10 KB strings, absurd numbers and a flood of transactions.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .serialized, .enabled(if: PackageKitDaemon.unavailable == nil, "\(PackageKitDaemon.unavailable ?? "")"))
struct PackageKitHostileInputTests {
    /// Signals that look like packagekitd's but come from another connection change nothing:
    /// the next real transaction is the only activity.
    @Test func signalsFromAnotherConnectionAreIgnored() throws {
        let packageKit = try PackageKitDaemon()
        let bridge = try BridgeUnderTest(packageKit)
        let address = packageKit.bus.address
        for arguments in [
            [
                "--object-path", "/1_forged", "--signal", "org.freedesktop.DBus.Properties.PropertiesChanged",
                "'org.freedesktop.PackageKit.Transaction'", "{'Status': <uint32 8>, 'Role': <uint32 22>}", "@as []",
            ],
            [
                "--object-path", "/org/freedesktop/PackageKit", "--signal",
                "org.freedesktop.PackageKit.TransactionListChanged", "['/1_forged']",
            ],
        ] {
            let result = try run("gdbus", ["emit", "--address", address] + arguments)
            #expect(result.succeeded, "\(result)")
        }
        let pkcon = try packageKit.pkcon(["refresh", "force"])
        let activity = try bridge.waitForActivity("the real refresh") { $0.fraction > 0 }
        #expect(activity.label == "Refreshing package lists")
        pkcon.send(signal: SIGTERM)
    }

    /// An owner of PackageKit's name that sends garbage and 10,000 transactions: the bridge
    /// neither crashes nor grows, says once that it follows only some, and still shows the one
    /// transaction that makes sense once the flood has left the list.
    @Test func garbageAndFloodsFromTheOwnerAreCut() throws {
        let packageKit = try PackageKitDaemon(startDaemon: false)
        let bridge = try BridgeUnderTest(packageKit)
        let hostile = try ChildProcess(
            "/usr/bin/python3", ["-c", hostilePackageKit, packageKit.bus.address], environment: packageKit.environment)
        defer {
            hostile.send(signal: SIGTERM)
            _ = try? hostile.waitForExit(timeout: .seconds(5))
        }
        let activity = try bridge.waitForActivity("the one sensible transaction") { $0.fraction > 0 }
        #expect(activity.label == "Downloading updates")
        #expect(activity.kind == "update")
        #expect(activity.fraction == 0.4)
        #expect(activity.claimedApplication == "python3")
        try waitUntil("the hostile owner to be done") { hostile.stdoutText.contains("done") }
        try bridge.waitUntilNoActivity("the transaction to end with its owner gone")
        #expect(bridge.process.isRunning, "\(bridge.process.stderrText)")
        // The pipe is read on a thread of the test's own, which may still be behind the bridge.
        try waitUntil("the bridge to say it cut the flood: \(bridge.process.stderrText)") {
            bridge.process.stderrText.contains("more than 64")
        }
        let lines = bridge.process.stderrText.split(separator: "\n").filter { $0.contains("more than 64") }
        #expect(lines.count == 1, "\(bridge.process.stderrText)")
        let resident = try residentSetSize(of: bridge.process.pid)
        #expect(resident < 64 << 20, "the bridge holds \(resident) bytes")
    }
}

/// Owns `org.freedesktop.PackageKit` on the bus given as argv[1] and sends what no packagekitd
/// would, then one transaction that makes sense (answering its GetAll), then leaves the bus.
private let hostilePackageKit = #"""
    import sys, dbus, dbus.service, dbus.mainloop.glib
    from gi.repository import GLib
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])
    bus.request_name('org.freedesktop.PackageKit')
    TX = 'org.freedesktop.PackageKit.Transaction'

    def emit(path, interface, member, signature, *arguments):
        message = dbus.lowlevel.SignalMessage(path, interface, member)
        if signature:
            message.append(*arguments, signature=signature)
        bus.send_message(message)

    class Good(dbus.service.Object):
        @dbus.service.method('org.freedesktop.DBus.Properties', in_signature='s', out_signature='a{sv}')
        def GetAll(self, interface):
            return {'Role': dbus.UInt32(22), 'Status': dbus.UInt32(8), 'Sender': bus.get_unique_name(),
                    'Percentage': dbus.UInt32(40), 'DownloadSizeRemaining': dbus.UInt64(0)}

    good = Good(bus, '/9_good')
    big = 'x' * 10000

    def garbage():
        emit('/org/freedesktop/PackageKit', 'org.freedesktop.PackageKit', 'TransactionListChanged', 's', '/1_x')
        emit('/org/freedesktop/PackageKit', 'org.freedesktop.PackageKit', 'TransactionListChanged', 'as',
             ['/%d_flood' % i for i in range(10000)])
        for i in range(200):
            emit('/%d_flood' % i, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', TX,
                 {'Status': big, 'Role': dbus.UInt64(2**63), 'Sender': big, 'Percentage': dbus.Int32(-5),
                  'DownloadSizeRemaining': dbus.UInt64(2**64 - 1)}, [big])
            emit('/%d_flood' % i, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', TX,
                 {'Status': dbus.UInt32(2**31), 'Percentage': dbus.UInt32(1000)}, [])
        emit('/1_flood', TX, 'Finished', 's', big)
        emit('/2_flood', TX, 'Destroy', 'as', [big])
        emit('/3_flood', 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 's', TX)
        # The flood leaves the list (finished, then), and one transaction that makes sense comes.
        emit('/org/freedesktop/PackageKit', 'org.freedesktop.PackageKit', 'TransactionListChanged', 'as', [])
        emit('/9_good', 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', TX,
             {'Role': dbus.UInt32(22)}, [])
        emit('/org/freedesktop/PackageKit', 'org.freedesktop.PackageKit', 'TransactionListChanged', 'as', ['/9_good'])
        return False

    def leave():
        print('done', flush=True)
        loop.quit()
        return False

    GLib.timeout_add(200, garbage)
    GLib.timeout_add(3000, leave)
    loop = GLib.MainLoop()
    loop.run()
    """#
