import DBus
import NetActivity
import Testing

@testable import NetActivityBridge

/// What the bridge makes of a transaction's properties, without a bus: network states, labels,
/// bytes and fractions, and input that is wrong in type or size.
@Suite struct PackageKitTransactionTests {
    private func transaction(_ properties: [String: Value]) -> PackageKitTransaction {
        var transaction = PackageKitTransaction()
        transaction.apply(properties.mapValues { .variant($0) })
        return transaction
    }

    private func work(_ properties: [String: Value]) -> String {
        let work = transaction(properties).work
        return "\(work.label) (\(work.kind))"
    }

    @Test(arguments: [7, 8, 20, 21, 22, 23, 24, 25] as [UInt32])
    func networkStatesAreDownloading(status: UInt32) {
        #expect(transaction(["Status": .uint32(status)]).isDownloading)
    }

    @Test(arguments: [0, 1, 2, 9, 10, 18, 19, 26, 27, 30, 31, 255, 1000] as [UInt32])
    func otherStatesAreNot(status: UInt32) {
        #expect(!transaction(["Status": .uint32(status)]).isDownloading)
    }

    @Test func labelsSayWhatTheTransactionDoes() {
        #expect(work(["Role": .uint32(13), "Status": .uint32(7)]) == "Refreshing package lists (update)")
        #expect(work(["Role": .uint32(22), "Status": .uint32(8)]) == "Downloading updates (update)")
        #expect(work(["Role": .uint32(11), "Status": .uint32(8)]) == "Downloading packages (download)")
        #expect(work(["Role": .uint32(25), "Status": .uint32(8)]) == "Downloading packages (download)")
        #expect(transaction(["Role": .uint32(33), "Status": .uint32(8)]).work.label == "Downloading a system upgrade")
        // A role that says nothing of the network: the status does.
        #expect(transaction(["Role": .uint32(17), "Status": .uint32(21)]).work.label == "Downloading package information")
        #expect(work(["Status": .uint32(8)]) == "Downloading packages (download)")
    }

    @Test func bytesCountFromTheLargestRemainingSeen() {
        var state = transaction(["Status": .uint32(8), "DownloadSizeRemaining": .uint64(1_000)])
        #expect(state.progress == .bytes(completed: 0, total: 1_000))
        state.apply(["DownloadSizeRemaining": .variant(.uint64(400)), "Percentage": .variant(.uint32(60))])
        #expect(state.progress == .bytes(completed: 600, total: 1_000))
        state.apply(["DownloadSizeRemaining": .variant(.uint64(0))])
        #expect(state.progress == .bytes(completed: 1_000, total: 1_000))
    }

    @Test func percentageIsAFractionOnlyWhileDownloading() {
        // 100 while the cache loads, before any byte moves: not a fraction of the download.
        var state = transaction(["Status": .uint32(27), "Percentage": .uint32(100)])
        #expect(state.progress == .unknown)
        state.apply(["Status": .variant(.uint32(7))])
        #expect(state.progress == .unknown)
        state.apply(["Percentage": .variant(.uint32(30))])
        #expect(state.progress == .fraction(0.3))
        state.apply(["Percentage": .variant(.uint32(101))])
        #expect(state.progress == .unknown, "101 is unknown")
        // With the status in the same signal, the status counts first.
        #expect(transaction(["Status": .uint32(8), "Percentage": .uint32(40)]).progress == .fraction(0.4))
    }

    @Test func wrongTypesAndAbsurdValuesAreIgnored() {
        var state = transaction([
            "Role": .uint32(13), "Status": .uint32(7), "Sender": .string(":1.42"), "Percentage": .uint32(10),
        ])
        let good = state
        let changed = state.apply([
            "Role": .variant(.string("refresh")), "Status": .variant(.int32(8)), "Sender": .variant(.uint32(3)),
            "Percentage": .variant(.double(0.5)), "DownloadSizeRemaining": .variant(.uint64(UInt64.max)),
        ])
        #expect(!changed)
        #expect(state == good)
        // Not in a variant, as a property map must have them.
        state.apply(["Status": .uint32(8)])
        #expect(state == good)
        state.apply(["Sender": .variant(.string(String(repeating: "x", count: 10_000)))])
        state.apply(["Sender": .variant(.string("org.gnome.Software"))])
        #expect(state.sender == ":1.42", "only a unique name of sensible length")
        state.apply(["Status": .variant(.uint32(UInt32.max)), "Role": .variant(.uint32(1 << 20))])
        #expect(state == good)
    }
}
