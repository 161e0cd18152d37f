/// Netlink as the kernel sends it, parsed from bytes: a datagram of `nlmsghdr`-framed messages,
/// each with a fixed header and `nlattr` attributes. Everything here reads kernel data through
/// bounds-checked loads: a truncated message, a length past the buffer or an attribute type
/// never heard of ends the parse of that message (or is skipped), never the process.
///
/// The layouts are those of `linux/netlink.h`, `linux/inet_diag.h` and `linux/tcp.h`, all in
/// host byte order except the ports and addresses of `inet_diag_sockid`, which are big-endian.
enum Netlink {
    static let headerSize = 16
    static let messageDone: UInt16 = 3
    static let messageError: UInt16 = 2
    /// `SOCK_DIAG_BY_FAMILY`: every answer to a dump and every destroy broadcast.
    static let sockDiagByFamily: UInt16 = 20

    /// One message of a datagram: its type and its payload after the 16-byte header.
    struct Message {
        var type: UInt16
        var flags: UInt16
        var sequence: UInt32
        var payload: ArraySlice<UInt8>
    }

    /// The messages of one datagram, in order; stops at the first whose length is impossible
    /// (shorter than its header, or past the end of the bytes).
    static func messages(in bytes: ArraySlice<UInt8>) -> [Message] {
        var result: [Message] = []
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= headerSize {
            guard let length = bytes.loadUInt32(at: offset), let type = bytes.loadUInt16(at: offset + 4),
                let flags = bytes.loadUInt16(at: offset + 6), let sequence = bytes.loadUInt32(at: offset + 8),
                length >= UInt32(headerSize), Int(length) <= bytes.endIndex - offset
            else { break }
            let end = offset + Int(length)
            result.append(Message(type: type, flags: flags, sequence: sequence, payload: bytes[(offset + headerSize)..<end]))
            offset += aligned(Int(length))
        }
        return result
    }

    /// The attributes (`nlattr`: length, type, value) packed in `bytes`: type (with the nested
    /// and byte-order flags cleared) to value. Stops at the first impossible length; a type seen
    /// twice keeps its first value.
    static func attributes(in bytes: ArraySlice<UInt8>) -> [UInt16: ArraySlice<UInt8>] {
        var result: [UInt16: ArraySlice<UInt8>] = [:]
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= 4 {
            guard let length = bytes.loadUInt16(at: offset), let rawType = bytes.loadUInt16(at: offset + 2),
                length >= 4, Int(length) <= bytes.endIndex - offset
            else { break }
            let type = rawType & 0x3FFF
            if result[type] == nil { result[type] = bytes[(offset + 4)..<(offset + Int(length))] }
            offset += aligned(Int(length))
        }
        return result
    }

    /// `NLMSG_ALIGN`: lengths are padded to four bytes.
    static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }
}

// MARK: - Bounds-checked loads

extension ArraySlice<UInt8> {
    /// The host-order (little-endian on every Linux this runs on) integer at `offset`, or nil if
    /// it does not fit in the slice.
    func loadUInt16(at offset: Int) -> UInt16? {
        guard offset >= startIndex, offset + 2 <= endIndex else { return nil }
        return UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    func loadUInt32(at offset: Int) -> UInt32? {
        guard let low = loadUInt16(at: offset), let high = loadUInt16(at: offset + 2) else { return nil }
        return UInt32(low) | UInt32(high) << 16
    }

    func loadUInt64(at offset: Int) -> UInt64? {
        guard let low = loadUInt32(at: offset), let high = loadUInt32(at: offset + 4) else { return nil }
        return UInt64(low) | UInt64(high) << 32
    }

    /// A big-endian (network order) 16-bit value: a port.
    func loadBigEndianUInt16(at offset: Int) -> UInt16? {
        loadUInt16(at: offset).map { $0.byteSwapped }
    }
}
