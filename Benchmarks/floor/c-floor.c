/*
 * c-floor: the least a libdbus service can do to serve Push/Pop and BeginActivity/EndActivity
 * as docs/interface.md requires, so the benchmark can compare netactivityd with the same bus traffic.
 *
 * It owns io.github.netactivity.NetActivity1 and keeps Count: the shared counter plus the
 * number of live activities. BeginActivity gets a reply carrying a fresh id (`u`), EndActivity
 * an empty one; Pop at 0 gets the NotActive error. For every flip of Active (Count 0 -> 1 or
 * 1 -> 0) it emits one org.freedesktop.DBus.Properties PropertiesChanged carrying only Active,
 * before the reply. Like the service (interface version 3), it announces each activity's object
 * with org.freedesktop.DBus.ObjectManager InterfacesAdded (every property of the activity
 * interface, the version 3 hints, Fraction and Rate included) before the BeginActivity reply, and InterfacesRemoved before the EndActivity reply. Every other method call gets an empty reply, like `dbus-test-tool echo`,
 * whose structure (one filter, dbus_connection_read_write_dispatch) this copies so the two
 * floors differ only in what they send.
 *
 * It is the benchmark's floor, not a service: no throttled Count, no owners or labels, no
 * checks of arguments or ids, no introspection.
 *
 *   c-floor [--address ADDR]     (default: the session bus)
 *
 * Build: cc -O2 c-floor.c $(pkg-config --cflags --libs dbus-1)
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NAME "io.github.netactivity.NetActivity1"
#define PATH "/io/github/netactivity/NetActivity1"
#define INTERFACE "io.github.netactivity.NetActivity1"
#define NOT_ACTIVE INTERFACE ".Error.NotActive"
#define ACTIVITY_INTERFACE INTERFACE ".Activity"
#define OBJECT_MANAGER "org.freedesktop.DBus.ObjectManager"

static unsigned long counter;      /* Count: pushes not popped plus live activities */
static dbus_uint32_t next_id = 1;

/* PropertiesChanged(INTERFACE, {"Active": <active>}, []) */
static void emit_active(DBusConnection *connection, dbus_bool_t active)
{
    DBusMessage *signal = dbus_message_new_signal(PATH, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged");
    DBusMessageIter iter, dict, entry, variant, invalidated;
    const char *interface = INTERFACE, *key = "Active";

    if (signal == NULL)
        return;
    dbus_message_iter_init_append(signal, &iter);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &interface);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &dict);
    dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "b", &variant);
    dbus_message_iter_append_basic(&variant, DBUS_TYPE_BOOLEAN, &active);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&dict, &entry);
    dbus_message_iter_close_container(&iter, &dict);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &invalidated);
    dbus_message_iter_close_container(&iter, &invalidated);
    dbus_connection_send(connection, signal, NULL);
    dbus_message_unref(signal);
}

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

/* InterfacesAdded(PATH/activity/ID, {ACTIVITY_INTERFACE: {Id, Label, Owner, Started, ...}}) */
static void emit_added(DBusConnection *connection, DBusMessage *call, dbus_uint32_t id)
{
    DBusMessage *signal = dbus_message_new_signal(PATH, OBJECT_MANAGER, "InterfacesAdded");
    DBusMessageIter iter, interfaces, entry, properties;
    char path[96];
    const char *object = path, *interface = ACTIVITY_INTERFACE, *label = "", *owner = dbus_message_get_sender(call);
    const char *application = "", *kind = "other";
    dbus_uint64_t started = 0, zero = 0;
    double unknown_fraction = -1.0, no_rate = 0.0;
    dbus_uint32_t unknown = 0xFFFFFFFF;

    if (signal == NULL)
        return;
    dbus_message_get_args(call, NULL, DBUS_TYPE_STRING, &label, DBUS_TYPE_INVALID);
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
    dbus_connection_send(connection, signal, NULL);
    dbus_message_unref(signal);
}

/* InterfacesRemoved(PATH/activity/ID, [ACTIVITY_INTERFACE]) */
static void emit_removed(DBusConnection *connection, DBusMessage *call)
{
    DBusMessage *signal = dbus_message_new_signal(PATH, OBJECT_MANAGER, "InterfacesRemoved");
    DBusMessageIter iter, interfaces;
    char path[96];
    const char *object = path, *interface = ACTIVITY_INTERFACE;
    dbus_uint32_t id = 0;

    if (signal == NULL)
        return;
    dbus_message_get_args(call, NULL, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID);
    snprintf(path, sizeof path, PATH "/activity/%u", id);
    dbus_message_iter_init_append(signal, &iter);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_OBJECT_PATH, &object);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &interfaces);
    dbus_message_iter_append_basic(&interfaces, DBUS_TYPE_STRING, &interface);
    dbus_message_iter_close_container(&iter, &interfaces);
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
            id = next_id++;
            emit_added(connection, message, id);
        } else if (ends) {
            emit_removed(connection, message);
        }
        if (begins || dbus_message_is_method_call(message, INTERFACE, "Push")) {
            if (counter++ == 0)
                emit_active(connection, TRUE);
        } else if (dbus_message_is_method_call(message, INTERFACE, "Pop") || ends) {
            if (counter > 0 && --counter == 0)
                emit_active(connection, FALSE);
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

int main(int argc, char **argv)
{
    DBusError error;
    DBusConnection *connection;
    int owned;

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
        fprintf(stderr, "usage: c-floor [--address ADDR]\n");
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
