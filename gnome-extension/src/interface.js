// MARK: - The interface, as the Swift code declares it

// Generated from Sources/NetActivityContract/Declaration/ by `make interface`; do not edit.
// RepositoryTests fails while this file is not what the declaration generates.

const BUS_NAME = 'io.github.netactivity.NetActivity1';
const OBJECT_PATH = '/io/github/netactivity/NetActivity1';
const MAIN_INTERFACE = 'io.github.netactivity.NetActivity1';
const ACTIVITY_INTERFACE = 'io.github.netactivity.NetActivity1.Activity';

/** Each property of io.github.netactivity.NetActivity1: its name and D-Bus type. */
const MAIN_PROPERTIES = Object.freeze({
    active: Object.freeze({name: 'Active', type: 'b'}),
    visible: Object.freeze({name: 'Visible', type: 'b'}),
    count: Object.freeze({name: 'Count', type: 'u'}),
    progress: Object.freeze({name: 'Progress', type: 'd'}),
    rate: Object.freeze({name: 'Rate', type: 'd'}),
    activities: Object.freeze({name: 'Activities', type: 'a(ussttt)'}),
    version: Object.freeze({name: 'Version', type: 's'}),
    interfaceVersion: Object.freeze({name: 'InterfaceVersion', type: 'u'}),
});

/** Each property of io.github.netactivity.NetActivity1.Activity: its name and D-Bus type. */
const ACTIVITY_PROPERTIES = Object.freeze({
    id: Object.freeze({name: 'Id', type: 'u'}),
    label: Object.freeze({name: 'Label', type: 's'}),
    owner: Object.freeze({name: 'Owner', type: 's'}),
    started: Object.freeze({name: 'Started', type: 't'}),
    completed: Object.freeze({name: 'Completed', type: 't'}),
    total: Object.freeze({name: 'Total', type: 't'}),
    processID: Object.freeze({name: 'ProcessID', type: 'u'}),
    userID: Object.freeze({name: 'UserID', type: 'u'}),
    application: Object.freeze({name: 'Application', type: 's'}),
    claimedApplication: Object.freeze({name: 'ClaimedApplication', type: 's'}),
    icon: Object.freeze({name: 'Icon', type: 's'}),
    kind: Object.freeze({name: 'Kind', type: 's'}),
    fraction: Object.freeze({name: 'Fraction', type: 'd'}),
    rate: Object.freeze({name: 'Rate', type: 'd'}),
});
