import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityService
import Testing

/// docs/interface.md, "Methods": Push and Pop, the shared counter.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct SharedCounterTests {
    @Test func pushAddsOneAndPopTakesOne() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        #expect(try client.count() == 0)
        #expect(try client.call("Push").isEmpty)
        #expect(try client.count() == 1)
        try client.call("Push")
        #expect(try client.count() == 2)
        #expect(try client.call("Pop").isEmpty)
        #expect(try client.count() == 1)
        try client.call("Pop")
        #expect(try client.count() == 0)
    }

    @Test func counterSurvivesTheConnectionThatPushed() throws {
        let service = try ServiceDaemon()
        var pusher: ServiceProbe? = try service.probe()
        try pusher?.call("Push")
        // The tracked activity is there to tell when the service has seen the departure.
        _ = try pusher?.begin("marks the departure")
        let observer = try service.probe()
        #expect(try observer.count() == 2)

        pusher = nil
        try waitUntil("the departed connection's activity to end") { try observer.listedActivities().isEmpty }
        #expect(try observer.count() == 1, "the shared counter is not tied to the caller")

        let popper = try service.probe()
        try popper.call("Pop")
        #expect(try observer.count() == 0)
    }

    @Test func popAtZeroIsNotActiveAndChangesNothing() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        expectCallFails(with: .notActive) { try client.call("Pop") }
        #expect(try client.count() == 0)
        #expect(try client.boolProperty("Active") == false)

        // A tracked activity makes Count 1 but the shared counter is still 0.
        let id = try client.begin("tracked")
        let before = try client.observedState()
        expectCallFails(with: .notActive) { try client.call("Pop") }
        #expect(try client.observedState() == before)
        #expect(before.activities.map(\.id) == [id])

        // After a Push and a Pop, the counter is back at 0 and refuses again.
        try client.call("Push")
        try client.call("Pop")
        expectCallFails(with: .notActive) { try client.call("Pop") }
        #expect(try client.count() == 1)
    }

    @Test(.skipped(under: .thread, "the service at its limit is one loop thread handling calls in turn: nothing for ThreadSanitizer to see, at tens of times the cost")) func pushStopsAtTheCapWithLimitsExceeded() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let cap = 65_536
        let replies = try client.pipelined("Push", count: cap)
        let failures = replies.filter { $0.kind != .methodReturn }
        #expect(failures.isEmpty, "\(failures.count) of \(cap) pushes failed, first: \(String(describing: failures.first?.error))")
        #expect(try client.count() == UInt32(cap))

        expectCallFails(with: .limitsExceeded) { try client.call("Push") }
        #expect(try client.count() == UInt32(cap), "a refused Push leaves the counter unchanged")

        try client.call("Pop")
        #expect(try client.count() == UInt32(cap - 1))
        try client.call("Push")
        #expect(try client.count() == UInt32(cap))
    }
}

/// docs/interface.md, "Methods": BeginActivity, UpdateActivity, EndActivity.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrackedActivityTests {
    @Test func idsAreNeverZeroIncreaseAndAreNotReused() throws {
        let service = try ServiceDaemon()
        let clients = [try service.probe(), try service.probe()]
        var begun: [(id: UInt32, owner: ServiceProbe)] = []
        for index in 0..<6 {
            let owner = clients[index % 2]
            begun.append((try owner.begin("activity \(index)"), owner))
        }
        let ids = begun.map(\.id)
        #expect(!ids.contains(0))
        #expect(ids == ids.sorted() && Set(ids).count == ids.count, "ids should strictly increase: \(ids)")

        // End the newest one too, so a counter that merely rewinds to the highest live id fails.
        for (id, owner) in begun.suffix(4) {
            try owner.call("EndActivity", [.uint32(id)])
        }
        let later = try clients[0].begin("after ends")
        #expect(later > ids.max() ?? 0, "an ended activity's id came back: \(later) after \(ids)")
        #expect(try clients[0].listedActivities().map(\.id) == [ids[0], ids[1], later])
    }

    @Test func beginReturnsAUint32AndListsTheActivity() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let reply = try client.call("BeginActivity", [.string("download")])
        #expect(reply.map(\.signature) == ["u"])
        let id = try #require(reply.first?.uint32)
        let listed = try client.listedActivities()
        #expect(listed.map(\.id) == [id])
        #expect(listed.first?.label == "download")
        #expect(listed.first?.owner == client.uniqueName)
        #expect(try client.count() == 1)
    }

    @Test func labelOfAtMost256BytesIsAccepted() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let labels = [
            ("256 ASCII bytes", String(repeating: "a", count: 256)),
            ("128 two-byte characters", String(repeating: "é", count: 128)),
            ("85 three-byte characters and one byte", String(repeating: "€", count: 85) + "a"),
            ("64 four-byte characters", String(repeating: "🛰", count: 64)),
            ("empty", ""),
        ]
        for (what, label) in labels {
            #expect(label.utf8.count <= 256)
            let id = try client.begin(label)
            #expect(try client.listedActivities().map(\.label) == [label], "\(what) should come back intact")
            try client.call("EndActivity", [.uint32(id)])
        }
    }

    @Test func labelLongerThan256BytesIsInvalidArgs() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        try client.call("Push")
        _ = try client.begin("already here")
        let before = try client.observedState()
        let labels = [
            ("257 ASCII bytes", String(repeating: "a", count: 257)),
            ("128 two-byte characters and one byte", String(repeating: "é", count: 128) + "a"),
            ("86 three-byte characters", String(repeating: "€", count: 86)),
            ("65 four-byte characters", String(repeating: "🛰", count: 65)),
            ("64 KiB", String(repeating: "x", count: 65_536)),
        ]
        for (what, label) in labels {
            #expect(label.utf8.count > 256)
            let error = expectCallFails(with: .invalidArgs) { try client.begin(label) }
            #expect(error != nil, "\(what) should be refused")
        }
        #expect(try client.observedState() == before, "a refused label starts nothing")
    }

    @Test func perConnectionCapIs1024AndOtherConnectionsAreUnaffected() throws {
        let service = try ServiceDaemon()
        let greedy = try service.probe()
        let replies = try greedy.pipelined("BeginActivity", [.string("one of many")], count: 1_024)
        let ids = try replies.map { reply in
            guard reply.kind == .methodReturn, let id = try reply.arguments().first?.uint32 else {
                throw BusTestError("BeginActivity failed below the cap: \(String(describing: reply.error))")
            }
            return id
        }
        #expect(Set(ids).count == 1_024)

        expectCallFails(with: .limitsExceeded) { try greedy.begin("one too many") }
        #expect(try greedy.count() == 1_024)

        let other = try service.probe()
        let otherID = try other.begin("someone else")
        #expect(try other.count() == 1_025)

        // Ending one makes room again for the same connection.
        try greedy.call("EndActivity", [.uint32(ids[0])])
        let again = try greedy.begin("room again")
        #expect(again > otherID)
        expectCallFails(with: .limitsExceeded) { try greedy.begin("full again") }
        #expect(try other.count() == 1_025)
    }

    @Test func onlyTheOwnerMayUpdateOrEnd() throws {
        let service = try ServiceDaemon()
        let owner = try service.probe()
        let stranger = try service.probe()
        let id = try owner.begin("mine")
        try owner.call("UpdateActivity", [.uint32(id), .uint64(3), .uint64(10)])
        let before = try owner.observedState()

        expectCallFails(with: .accessDenied) {
            try stranger.call("UpdateActivity", [.uint32(id), .uint64(7), .uint64(10)])
        }
        expectCallFails(with: .accessDenied) {
            try stranger.call("UpdateActivity", [.uint32(id), .uint64(0), .uint64(0)])
        }
        expectCallFails(with: .accessDenied) { try stranger.call("EndActivity", [.uint32(id)]) }
        #expect(try owner.observedState() == before)

        try owner.call("UpdateActivity", [.uint32(id), .uint64(7), .uint64(10)])
        #expect(try owner.listedActivities().first?.completed == 7)
        try owner.call("EndActivity", [.uint32(id)])
        #expect(try owner.count() == 0)
    }

    @Test func unknownIdIsUnknownActivity() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let live = try client.begin("the only one")
        let before = try client.observedState()
        for id in [0, live &+ 1, live &+ 1_000, .max] where id != live {
            expectCallFails(with: .unknownActivity) {
                try client.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(2)])
            }
            expectCallFails(with: .unknownActivity) { try client.call("EndActivity", [.uint32(id)]) }
        }
        #expect(try client.observedState() == before)
    }

    @Test func completedBeyondAKnownTotalIsInvalidArgs() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let id = try client.begin("bounded")
        try client.call("UpdateActivity", [.uint32(id), .uint64(3), .uint64(10)])
        let before = try client.observedState()

        expectCallFails(with: .invalidArgs) {
            try client.call("UpdateActivity", [.uint32(id), .uint64(11), .uint64(10)])
        }
        expectCallFails(with: .invalidArgs) {
            try client.call("UpdateActivity", [.uint32(id), .uint64(.max), .uint64(1)])
        }
        #expect(try client.observedState() == before)

        try client.call("UpdateActivity", [.uint32(id), .uint64(10), .uint64(10)])
        let listed = try client.listedActivities()
        #expect(listed.map(\.completed) == [10] && listed.map(\.total) == [10])
    }

    @Test func totalZeroMeansUnknownWithAnyCompleted() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let id = try client.begin("unknown size")
        try client.call("UpdateActivity", [.uint32(id), .uint64(.max), .uint64(0)])
        var listed = try client.listedActivities()
        #expect(listed.map(\.completed) == [.max] && listed.map(\.total) == [0])
        #expect(try client.progress() == -1.0)

        try client.call("UpdateActivity", [.uint32(id), .uint64(5), .uint64(0)])
        listed = try client.listedActivities()
        #expect(listed.map(\.completed) == [5] && listed.map(\.total) == [0])
    }

    @Test func endingTwiceIsUnknownActivityTheSecondTime() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let id = try client.begin("once")
        let other = try client.begin("stays")
        #expect(try client.call("EndActivity", [.uint32(id)]).isEmpty)
        #expect(try client.listedActivities().map(\.id) == [other])

        expectCallFails(with: .unknownActivity) { try client.call("EndActivity", [.uint32(id)]) }
        expectCallFails(with: .unknownActivity) {
            try client.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(1)])
        }
        #expect(try client.listedActivities().map(\.id) == [other])
        #expect(try client.count() == 1)
    }
}
