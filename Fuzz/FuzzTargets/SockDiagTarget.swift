@testable import NetActivityBridge

extension FuzzTarget {
    /// A sock_diag datagram, read the three ways the traffic source reads one: as a part of a
    /// dump (only its own sequence counts), as the answers to a batch of lookups, and as a TCP
    /// destroy broadcast (any sequence).
    public static let sockDiag = FuzzTarget("sock-diag") { bytes in
        let datagram = bytes[...]
        let sequence = datagram.loadUInt32(at: 8) ?? 0
        let dump = SocketRecord.parse(datagram: datagram, sequence: sequence)
        let lookups = SocketRecord.parse(lookupAnswers: datagram, firstSequence: sequence, count: SockDiagSocket.lookupsPerRequest)
        let broadcast = SocketRecord.parse(datagram: datagram)
        for record in dump.records + lookups.records + broadcast.records {
            _ = record.isLoopback
        }
    }
}
