/*
 * c-watcher: the least a libdbus client can do to follow every activity object of
 * netactivityd, so the benchmark can compare the Swift client library's watcher with it.
 *
 * It subscribes as the library does (PropertiesChanged below the main object, the
 * ObjectManager's InterfacesAdded/InterfacesRemoved), reads every object with
 * GetManagedObjects, and then decodes every signal into a table of activities indexed by id:
 * Completed, Total, Fraction and Rate from each PropertiesChanged, the object from
 * InterfacesAdded, its removal from InterfacesRemoved. Nothing is printed and nothing is
 * derived (no counts, no snapshots): it is the floor, not a watcher people read.
 *
 *   c-watcher [--address ADDR]     (default: the session bus)
 *
 * Build: cc -O2 c-watcher.c $(pkg-config --cflags --libs dbus-1)
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "io.github.netactivity.NetActivity1"
#define PATH "/io/github/netactivity/NetActivity1"
#define ACTIVITY_PREFIX PATH "/activity/"
#define ACTIVITY_INTERFACE "io.github.netactivity.NetActivity1.Activity"

struct activity {
    int live;
    dbus_uint64_t completed, total;
    double fraction, rate;
};

static struct activity *activities;
static unsigned long capacity;

static struct activity *activity_at(const char *path)
{
    unsigned long id;
    char *end;

    if (strncmp(path, ACTIVITY_PREFIX, strlen(ACTIVITY_PREFIX)) != 0)
        return NULL;
    id = strtoul(path + strlen(ACTIVITY_PREFIX), &end, 10);
    if (*end != '\0' || id == 0 || id > 1UL << 24)
        return NULL;
    if (id >= capacity) {
        unsigned long grown = capacity ? capacity : 1024;
        while (grown <= id)
            grown *= 2;
        activities = realloc(activities, grown * sizeof *activities);
        memset(activities + capacity, 0, (grown - capacity) * sizeof *activities);
        capacity = grown;
    }
    return &activities[id];
}

/* One a{sv} of activity properties into `activity`. */
static void apply(DBusMessageIter *dict, struct activity *activity)
{
    DBusMessageIter entry, variant;
    const char *key;

    while (dbus_message_iter_get_arg_type(dict) == DBUS_TYPE_DICT_ENTRY) {
        dbus_message_iter_recurse(dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        int type = dbus_message_iter_get_arg_type(&variant);
        if (type == DBUS_TYPE_UINT64 && strcmp(key, "Completed") == 0)
            dbus_message_iter_get_basic(&variant, &activity->completed);
        else if (type == DBUS_TYPE_UINT64 && strcmp(key, "Total") == 0)
            dbus_message_iter_get_basic(&variant, &activity->total);
        else if (type == DBUS_TYPE_DOUBLE && strcmp(key, "Fraction") == 0)
            dbus_message_iter_get_basic(&variant, &activity->fraction);
        else if (type == DBUS_TYPE_DOUBLE && strcmp(key, "Rate") == 0)
            dbus_message_iter_get_basic(&variant, &activity->rate);
        dbus_message_iter_next(dict);
    }
}

/* {oa{sa{sv}}}: an object path and its interfaces, from GetManagedObjects or InterfacesAdded. */
static void add(const char *path, DBusMessageIter *interfaces)
{
    DBusMessageIter entry, properties;
    const char *interface;
    struct activity *activity = activity_at(path);

    if (activity == NULL)
        return;
    while (dbus_message_iter_get_arg_type(interfaces) == DBUS_TYPE_DICT_ENTRY) {
        dbus_message_iter_recurse(interfaces, &entry);
        dbus_message_iter_get_basic(&entry, &interface);
        dbus_message_iter_next(&entry);
        if (strcmp(interface, ACTIVITY_INTERFACE) == 0) {
            dbus_message_iter_recurse(&entry, &properties);
            activity->live = 1;
            apply(&properties, activity);
        }
        dbus_message_iter_next(interfaces);
    }
}

static DBusHandlerResult filter(DBusConnection *connection, DBusMessage *message, void *data)
{
    DBusMessageIter iter, inner;
    const char *text;
    struct activity *activity;

    (void)connection;
    (void)data;
    if (dbus_message_is_signal(message, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged")) {
        activity = activity_at(dbus_message_get_path(message));
        if (activity == NULL || !dbus_message_iter_init(message, &iter))
            return DBUS_HANDLER_RESULT_HANDLED;
        dbus_message_iter_next(&iter);
        dbus_message_iter_recurse(&iter, &inner);
        apply(&inner, activity);
    } else if (dbus_message_is_signal(message, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded")) {
        if (!dbus_message_iter_init(message, &iter))
            return DBUS_HANDLER_RESULT_HANDLED;
        dbus_message_iter_get_basic(&iter, &text);
        dbus_message_iter_next(&iter);
        dbus_message_iter_recurse(&iter, &inner);
        add(text, &inner);
    } else if (dbus_message_is_signal(message, "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved")) {
        if (!dbus_message_iter_init(message, &iter))
            return DBUS_HANDLER_RESULT_HANDLED;
        dbus_message_iter_get_basic(&iter, &text);
        activity = activity_at(text);
        if (activity != NULL)
            activity->live = 0;
    }
    return DBUS_HANDLER_RESULT_HANDLED;
}

int main(int argc, char **argv)
{
    DBusError error;
    DBusConnection *connection;
    DBusMessage *call, *reply;
    DBusMessageIter iter, objects, entry;
    const char *path;

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
        fprintf(stderr, "usage: c-watcher [--address ADDR]\n");
        return 2;
    }
    if (connection == NULL) {
        fprintf(stderr, "c-watcher: %s\n", error.message);
        return 1;
    }
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    dbus_bus_add_match(connection, "type='signal',sender='" NAME "',interface='org.freedesktop.DBus.Properties',"
                       "member='PropertiesChanged',path_namespace='" PATH "'", &error);
    dbus_bus_add_match(connection, "type='signal',sender='" NAME "',interface='org.freedesktop.DBus.ObjectManager',"
                       "path='" PATH "'", &error);
    if (dbus_error_is_set(&error)) {
        fprintf(stderr, "c-watcher: %s\n", error.message);
        return 1;
    }
    call = dbus_message_new_method_call(NAME, PATH, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects");
    reply = dbus_connection_send_with_reply_and_block(connection, call, 60000, &error);
    dbus_message_unref(call);
    if (reply == NULL) {
        fprintf(stderr, "c-watcher: GetManagedObjects: %s\n", error.message);
        return 1;
    }
    if (dbus_message_iter_init(reply, &iter) && dbus_message_iter_get_arg_type(&iter) == DBUS_TYPE_ARRAY) {
        dbus_message_iter_recurse(&iter, &objects);
        while (dbus_message_iter_get_arg_type(&objects) == DBUS_TYPE_DICT_ENTRY) {
            dbus_message_iter_recurse(&objects, &entry);
            dbus_message_iter_get_basic(&entry, &path);
            dbus_message_iter_next(&entry);
            DBusMessageIter interfaces;
            dbus_message_iter_recurse(&entry, &interfaces);
            add(path, &interfaces);
            dbus_message_iter_next(&objects);
        }
    }
    dbus_message_unref(reply);
    if (!dbus_connection_add_filter(connection, filter, NULL, NULL))
        return 1;
    while (dbus_connection_read_write_dispatch(connection, -1)) {
    }
    return 0;
}
