internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A descriptor libdbus wants polled (libdbus's `DBusWatch*`), valid until libdbus removes it.
struct Watch: Equatable {
    let pointer: OpaquePointer

    /// Whether libdbus wants it polled now; libdbus toggles this as its queues fill and drain.
    var isEnabled: Bool { dbus_watch_get_enabled(pointer) != 0 }

    var descriptor: Int32 { dbus_watch_get_unix_fd(pointer) }

    /// The poll(2) events libdbus waits for.
    var pollEvents: Int16 {
        let flags = dbus_watch_get_flags(pointer)
        var events: Int16 = 0
        if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
        return events
    }

    /// Lets libdbus read or write what poll(2) reported as `revents`.
    func handle(revents: Int16) {
        var flags: UInt32 = 0
        if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
        if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
        if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
        if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
        _ = dbus_watch_handle(pointer, flags)
    }
}

/// A timeout libdbus wants run (libdbus's `DBusTimeout*`), valid until libdbus removes it.
struct LibdbusTimeout: Equatable {
    let pointer: OpaquePointer

    var isEnabled: Bool { dbus_timeout_get_enabled(pointer) != 0 }

    /// The interval in milliseconds, never negative.
    var interval: Int32 { max(0, dbus_timeout_get_interval(pointer)) }

    func handle() { _ = dbus_timeout_handle(pointer) }
}

extension RawConnection {
    /// Lets `loop` poll this connection's watches, run its timeouts and dispatch it: libdbus
    /// reports them to the loop through the callbacks below. The loop must outlive the
    /// registration (`stopDriving()` removes it); libdbus keeps no reference to it.
    func drive(with loop: EventLoop) {
        let me = Unmanaged.passUnretained(loop).toOpaque()
        dbus_connection_set_watch_functions(pointer, addWatch, removeWatch, toggleWatch, me, nil)
        dbus_connection_set_timeout_functions(pointer, addTimeout, removeTimeout, toggleTimeout, me, nil)
        dbus_connection_set_wakeup_main_function(pointer, wakeUpMain, me, nil)
        dbus_connection_set_dispatch_status_function(pointer, dispatchStatusChanged, me, nil)
    }

    /// Undoes `drive(with:)`.
    func stopDriving() {
        dbus_connection_set_watch_functions(pointer, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(pointer, nil, nil, nil, nil, nil)
        dbus_connection_set_wakeup_main_function(pointer, nil, nil, nil)
        dbus_connection_set_dispatch_status_function(pointer, nil, nil, nil)
    }
}

// MARK: - C callbacks

private func loop(_ data: UnsafeMutableRawPointer?) -> EventLoop? {
    data.map { Unmanaged<EventLoop>.fromOpaque($0).takeUnretainedValue() }
}

private let addWatch: DBusAddWatchFunction = { watch, data in
    if let watch { loop(data)?.watchAdded(Watch(pointer: watch)) }
    return 1
}
private let removeWatch: DBusRemoveWatchFunction = { watch, data in
    if let watch { loop(data)?.watchRemoved(Watch(pointer: watch)) }
}
// The loop reads each watch's enabled flag every turn, so a toggle needs no bookkeeping.
private let toggleWatch: DBusWatchToggledFunction = { _, _ in }
private let addTimeout: DBusAddTimeoutFunction = { timeout, data in
    if let timeout { loop(data)?.timeoutAdded(LibdbusTimeout(pointer: timeout)) }
    return 1
}
private let removeTimeout: DBusRemoveTimeoutFunction = { timeout, data in
    if let timeout { loop(data)?.timeoutRemoved(LibdbusTimeout(pointer: timeout)) }
}
private let toggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
    if let timeout { loop(data)?.timeoutToggled(LibdbusTimeout(pointer: timeout)) }
}
// Called for every message sent: the attached loop outlives the registration (detach removes
// it), so it is used without a reference of our own.
private let wakeUpMain: DBusWakeupMainFunction = { data in
    guard let data else { return }
    Unmanaged<EventLoop>.fromOpaque(data).takeUnretainedValue().wakeFromLibdbus()
}
private let dispatchStatusChanged: DBusDispatchStatusFunction = { _, status, data in
    if status == DBUS_DISPATCH_DATA_REMAINS { loop(data)?.wakeFromLibdbus() }
}
