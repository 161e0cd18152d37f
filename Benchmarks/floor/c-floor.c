/*
 * c-floor: the least a libdbus service can do to serve Push/Pop and BeginActivity/EndActivity
 * as docs/interface.md requires, so the benchmark can compare netactivityd with the same bus traffic.
 *
 * It owns io.github.netactivity.NetActivity1 and keeps Count: the shared counter plus the
 * number of live activities. BeginActivity gets a reply carrying a fresh id (`u`), EndActivity
 * an empty one; Pop at 0 gets the NotActive error. For every flip of Active (Count 0 -> 1 or
 * 1 -> 0) it emits one org.freedesktop.DBus.Properties PropertiesChanged carrying Active and
 * the new Count (the interface's consistency rule), before the reply. Like the service
 * (interface version 3), it announces each activity's object with
 * org.freedesktop.DBus.ObjectManager InterfacesAdded (every property of the activity interface,
 * the version 3 hints, Fraction and Rate included) before the BeginActivity reply, and
 * InterfacesRemoved before the EndActivity reply. Every other method call gets an empty reply,
 * like `dbus-test-tool echo`, whose structure (one filter, dbus_connection_read_write_dispatch)
 * this copies so the two floors differ only in what they send.
 *
 * It is the benchmark's floor, not a service: no throttled Count, no owners or labels, no
 * checks of arguments or ids, no introspection.
 *
 *   c-floor [--address ADDR]     (default: the session bus)
 *   c-floor --time-signals [N]   (no bus: the cost of making each of its three signals)
 *
 * --time-signals makes each signal N times (default 200,000) through libdbus's type writer, as
 * the floor does when serving, and N times from its bytes through dbus_message_demarshal plus
 * the copy that lets a connection number it, as netactivityd does (its own encoder writes the
 * same bytes), and prints microseconds per signal for both (docs/benchmarks.md).
 *
 * Build: cc -O2 c-floor.c $(pkg-config --cflags --libs dbus-1)
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NAME "io.github.netactivity.NetActivity1"
#define PATH "/io/github/netactivity/NetActivity1"
#define INTERFACE "io.github.netactivity.NetActivity1"
#define NOT_ACTIVE INTERFACE ".Error.NotActive"
#define ACTIVITY_INTERFACE INTERFACE ".Activity"
#define OBJECT_MANAGER "org.freedesktop.DBus.ObjectManager"

static unsigned long counter;      /* Count: pushes not popped plus live activities */
static dbus_uint32_t next_id = 1;

static void append_entry(DBusMessageIter *dict, const char *key, int type, const void *value)
{
    DBusMessageIter entry, variant;
    char signature[2] = {(char)type, 0};

    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, signature, &variant);
    dbus_message_iter_append_basic(&variant, type, value);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(dict, &entry);
}

/* PropertiesChanged(INTERFACE, {"Active": <active>, "Count": <count>}, []): the interface's
 * consistency rule puts the new Count beside every Active, as the service sends it. */
static DBusMessage *make_active(dbus_bool_t active, dbus_uint32_t count)
{
    DBusMessage *signal = dbus_message_new_signal(PATH, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged");
    DBusMessageIter iter, dict, invalidated;
    const char *interface = INTERFACE;

    if (signal == NULL)
        return NULL;
    dbus_message_iter_init_append(signal, &iter);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &interface);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &dict);
    append_entry(&dict, "Active", DBUS_TYPE_BOOLEAN, &active);
    append_entry(&dict, "Count", DBUS_TYPE_UINT32, &count);
    dbus_message_iter_close_container(&iter, &dict);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &invalidated);
    dbus_message_iter_close_container(&iter, &invalidated);
    return signal;
}

/* InterfacesAdded(PATH/activity/ID, {ACTIVITY_INTERFACE: {Id, Label, Owner, Started, ...}}) */
static DBusMessage *make_added(const char *label, const char *owner, dbus_uint32_t id)
{
    DBusMessage *signal = dbus_message_new_signal(PATH, OBJECT_MANAGER, "InterfacesAdded");
    DBusMessageIter iter, interfaces, entry, properties;
    char path[96];
    const char *object = path, *interface = ACTIVITY_INTERFACE;
    const char *application = "", *kind = "other";
    dbus_uint64_t started = 0, zero = 0;
    double unknown_fraction = -1.0, no_rate = 0.0;
    dbus_uint32_t unknown = 0xFFFFFFFF;

    if (signal == NULL)
        return NULL;
    if (owner == NULL)
        owner = "";
    snprintf(path, sizeof path, PATH "/activity/%u", id);
    dbus_message_iter_init_append(signal, &iter);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_OBJECT_PATH, &object);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sa{sv}}", &interfaces);
    dbus_message_iter_open_container(&interfaces, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &interface);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_ARRAY, "{sv}", &properties);
    append_entry(&properties, "Id", DBUS_TYPE_UINT32, &id);
    append_entry(&properties, "Label", DBUS_TYPE_STRING, &label);
    append_entry(&properties, "Owner", DBUS_TYPE_STRING, &owner);
    append_entry(&properties, "Started", DBUS_TYPE_UINT64, &started);
    append_entry(&properties, "Completed", DBUS_TYPE_UINT64, &zero);
    append_entry(&properties, "Total", DBUS_TYPE_UINT64, &zero);
    append_entry(&properties, "ProcessID", DBUS_TYPE_UINT32, &unknown);
    append_entry(&properties, "UserID", DBUS_TYPE_UINT32, &unknown);
    append_entry(&properties, "Application", DBUS_TYPE_STRING, &application);
    append_entry(&properties, "ClaimedApplication", DBUS_TYPE_STRING, &application);
    append_entry(&properties, "Icon", DBUS_TYPE_STRING, &application);
    append_entry(&properties, "Kind", DBUS_TYPE_STRING, &kind);
    append_entry(&properties, "Fraction", DBUS_TYPE_DOUBLE, &unknown_fraction);
    append_entry(&properties, "Rate", DBUS_TYPE_DOUBLE, &no_rate);
    dbus_message_iter_close_container(&entry, &properties);
    dbus_message_iter_close_container(&interfaces, &entry);
    dbus_message_iter_close_container(&iter, &interfaces);
    return signal;
}

/* InterfacesRemoved(PATH/activity/ID, [ACTIVITY_INTERFACE]) */
static DBusMessage *make_removed(dbus_uint32_t id)
{
    DBusMessage *signal = dbus_message_new_signal(PATH, OBJECT_MANAGER, "InterfacesRemoved");
    DBusMessageIter iter, interfaces;
    char path[96];
    const char *object = path, *interface = ACTIVITY_INTERFACE;

    if (signal == NULL)
        return NULL;
    snprintf(path, sizeof path, PATH "/activity/%u", id);
    dbus_message_iter_init_append(signal, &iter);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_OBJECT_PATH, &object);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &interfaces);
    dbus_message_iter_append_basic(&interfaces, DBUS_TYPE_STRING, &interface);
    dbus_message_iter_close_container(&iter, &interfaces);
    return signal;
}

static void send_signal(DBusConnection *connection, DBusMessage *signal)
{
    if (signal == NULL)
        return;
    dbus_connection_send(connection, signal, NULL);
    dbus_message_unref(signal);
}

static DBusHandlerResult filter(DBusConnection *connection, DBusMessage *message, void *data)
{
    DBusMessage *reply;
    (void)data;

    if (dbus_message_is_signal(message, DBUS_INTERFACE_LOCAL, "Disconnected")) {
        fprintf(stderr, "c-floor: disconnected\n");
        _exit(1);
    }
    if (dbus_message_get_type(message) != DBUS_MESSAGE_TYPE_METHOD_CALL)
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;

    if (dbus_message_is_method_call(message, INTERFACE, "Pop") && counter == 0) {
        reply = dbus_message_new_error(message, NOT_ACTIVE, "the shared counter is 0");
    } else {
        int begins = dbus_message_is_method_call(message, INTERFACE, "BeginActivity");
        int ends = dbus_message_is_method_call(message, INTERFACE, "EndActivity");
        dbus_uint32_t id = 0;

        if (begins) {
            const char *label = "";

            id = next_id++;
            dbus_message_get_args(message, NULL, DBUS_TYPE_STRING, &label, DBUS_TYPE_INVALID);
            send_signal(connection, make_added(label, dbus_message_get_sender(message), id));
        } else if (ends) {
            dbus_uint32_t ended = 0;

            dbus_message_get_args(message, NULL, DBUS_TYPE_UINT32, &ended, DBUS_TYPE_INVALID);
            send_signal(connection, make_removed(ended));
        }
        if (begins || dbus_message_is_method_call(message, INTERFACE, "Push")) {
            if (counter++ == 0)
                send_signal(connection, make_active(TRUE, (dbus_uint32_t)counter));
        } else if (dbus_message_is_method_call(message, INTERFACE, "Pop") || ends) {
            if (counter > 0 && --counter == 0)
                send_signal(connection, make_active(FALSE, (dbus_uint32_t)counter));
        }
        reply = dbus_message_new_method_return(message);
        if (reply != NULL && begins) {
            if (!dbus_message_append_args(reply, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID)) {
                dbus_message_unref(reply);
                reply = NULL;
            }
        }
    }
    if (reply != NULL) {
        if (!dbus_message_get_no_reply(message))
            dbus_connection_send(connection, reply, NULL);
        dbus_message_unref(reply);
    }
    return DBUS_HANDLER_RESULT_HANDLED;
}

static double seconds(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* Which of the three signals a timing makes; the id and flag vary as when serving. */
static DBusMessage *make_signal(int which, unsigned i)
{
    switch (which) {
    case 0: return make_added("download", ":1.23", i + 1);
    case 1: return make_removed(i + 1);
    default: return make_active(i & 1, i & 1);
    }
}

/* Each signal made n times through the type writer and n times from its bytes, the second as
 * netactivityd makes its own: dbus_message_demarshal validates them, and the copy has serial 0
 * so that a connection numbers it. The alternation of two rounds shows the spread. */
static int time_signals(unsigned n)
{
    static const char *const names[] = {"InterfacesAdded", "InterfacesRemoved", "PropertiesChanged (Active, Count)"};

    printf("%-33s %7s %18s %22s\n", "signal", "bytes", "type writer, µs", "demarshal + copy, µs");
    for (int which = 0; which < 3; which++) {
        double writer[2], demarshal[2];
        DBusMessage *model = make_signal(which, 6);
        char *bytes = NULL;
        int length = 0;
        DBusError error;

        dbus_error_init(&error);
        if (model == NULL)
            return 1;
        dbus_message_set_serial(model, 1);
        if (!dbus_message_marshal(model, &bytes, &length))
            return 1;
        for (int round = 0; round < 2; round++) {
            double start = seconds();
            for (unsigned i = 0; i < n; i++)
                dbus_message_unref(make_signal(which, i));
            writer[round] = (seconds() - start) / n * 1e6;
            start = seconds();
            for (unsigned i = 0; i < n; i++) {
                DBusMessage *parsed = dbus_message_demarshal(bytes, length, &error);
                DBusMessage *copy;

                if (parsed == NULL) {
                    fprintf(stderr, "c-floor: %s\n", error.message);
                    return 1;
                }
                copy = dbus_message_copy(parsed);
                dbus_message_unref(parsed);
                if (copy == NULL)
                    return 1;
                dbus_message_unref(copy);
            }
            demarshal[round] = (seconds() - start) / n * 1e6;
        }
        printf("%-33s %7d %9.2f / %-6.2f %13.2f / %-6.2f\n", names[which], length, writer[0], writer[1],
               demarshal[0], demarshal[1]);
        dbus_free(bytes);
        dbus_message_unref(model);
    }
    return 0;
}

int main(int argc, char **argv)
{
    DBusError error;
    DBusConnection *connection;
    int owned;

    if (argc >= 2 && strcmp(argv[1], "--time-signals") == 0) {
        char *end = "";
        long n = argc == 3 ? strtol(argv[2], &end, 10) : 200000;

        if (argc > 3 || *end != '\0' || n <= 0 || n > 100000000) {
            fprintf(stderr, "usage: c-floor --time-signals [N]\n");
            return 2;
        }
        return time_signals((unsigned)n);
    }
    dbus_error_init(&error);
    if (argc == 3 && strcmp(argv[1], "--address") == 0) {
        connection = dbus_connection_open_private(argv[2], &error);
        if (connection != NULL && !dbus_bus_register(connection, &error)) {
            dbus_connection_unref(connection);
            connection = NULL;
        }
    } else if (argc == 1) {
        connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error);
    } else {
        fprintf(stderr, "usage: c-floor [--address ADDR] | --time-signals [N]\n");
        return 2;
    }
    if (connection == NULL) {
        fprintf(stderr, "c-floor: %s\n", error.message);
        return 1;
    }
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    if (!dbus_connection_add_filter(connection, filter, NULL, NULL))
        return 1;
    owned = dbus_bus_request_name(connection, NAME, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
        fprintf(stderr, "c-floor: cannot own %s: %s\n", NAME,
                dbus_error_is_set(&error) ? error.message : "taken");
        return 1;
    }
    while (dbus_connection_read_write_dispatch(connection, -1)) {
    }
    return 0;
}
