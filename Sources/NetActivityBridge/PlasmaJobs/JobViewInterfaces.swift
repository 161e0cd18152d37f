import DBus

/// KDE's job progress interfaces, as plasmashell 6.3 declares them (its introspection is kept
/// in `Tests/NetActivityBridgeTests/Fixtures/`, and the tests hold these declarations to it),
/// declared once with the typed descriptors: the served side binds its tables to them and the
/// mirror calls plasmashell through them.
///
/// A program asks the job server (`org.kde.JobViewServer`, or KF5's `org.kde.kuiserver`, at
/// `/JobViewServer`) for a view with `requestView`, then drives the object it is given with
/// `org.kde.JobViewV2`'s setters or `org.kde.JobViewV3.update`, and ends it with `terminate`.
package enum JobViewInterfaces {
    /// The name KF6 programs (`KUiServerV2JobTracker`) call.
    package static let serverName: BusName = "org.kde.JobViewServer"
    /// The name KF5 programs (`KUiServerJobTracker`) call.
    package static let kuiserverName: BusName = "org.kde.kuiserver"
    package static let serverPath: ObjectPath = "/JobViewServer"

    package static let serverInterface: InterfaceName = "org.kde.JobViewServer"
    package static let serverV2Interface: InterfaceName = "org.kde.JobViewServerV2"
    package static let kuiserverInterface: InterfaceName = "org.kde.kuiserver"
    package static let viewV2Interface: InterfaceName = "org.kde.JobViewV2"
    package static let viewV3Interface: InterfaceName = "org.kde.JobViewV3"

    // MARK: - The server

    package static let requestView = MethodDescriptor<ObjectPath, String, String, Int32>(
        "requestView", of: serverInterface, "appName", "appIconName", "capabilities", returning: ["trackerPath"],
        doc: "KF5: a new job view for the application appName with the icon appIconName; capabilities 1 can cancel, 2 suspend.")
    package static let requestViewV2 = MethodDescriptor<ObjectPath, String, Int32, VariantDictionary>(
        "requestView", of: serverV2Interface, "desktopEntry", "capabilities", "hints", returning: ["trackerPath"],
        doc: "A new job view for the application desktopEntry; hints name it (application-display-name, application-icon-name) and may carry the job's first state.")

    package static let server = InterfaceDescriptor(
        serverInterface, doc: "KF5's job server.", methods: [requestView.declaration], properties: [])
    package static let serverV2 = InterfaceDescriptor(
        serverV2Interface, doc: "KF6's job server.", methods: [requestViewV2.declaration], properties: [])

    // MARK: - kuiserver

    // KIO's KDynamicJobTracker asks requiresJobTracker whether it must show a progress window of
    // its own beside the server; the rest is declared because plasmashell declares it.
    package static let registerService = MethodDescriptor<NoReply, String, String>(
        "registerService", of: kuiserverInterface, "service", "objectPath", doc: "Unused.")
    package static let emitJobUrlsChanged = MethodDescriptor<NoReply>(
        "emitJobUrlsChanged", of: kuiserverInterface, doc: "Unused.")
    package static let requiresJobTracker = MethodDescriptor<Bool>(
        "requiresJobTracker", of: kuiserverInterface, returning: [""],
        doc: "Whether programs should show progress windows of their own: false, the server shows their jobs.")
    package static let registeredJobContacts = MethodDescriptor<[String]>(
        "registeredJobContacts", of: kuiserverInterface, returning: [""], doc: "Always empty.")
    package static let jobUrlsChanged = SignalDescriptor<[String]>(
        "jobUrlsChanged", of: kuiserverInterface, "", doc: "Never sent.")
    package static let requiresJobTrackerChanged = SignalDescriptor<Bool>(
        "requiresJobTrackerChanged", of: kuiserverInterface, "", doc: "Never sent: the answer does not change.")

    package static let kuiserver = InterfaceDescriptor(
        kuiserverInterface, doc: "KF5's kuiserver, as far as KIO asks it.",
        methods: [
            registerService.declaration, emitJobUrlsChanged.declaration, requiresJobTracker.declaration,
            registeredJobContacts.declaration,
        ],
        properties: [], signals: [jobUrlsChanged.declaration, requiresJobTrackerChanged.declaration])

    // MARK: - A view, version 2: one setter a field

    package static let terminate = MethodDescriptor<NoReply, String>(
        "terminate", of: viewV2Interface, "errorMessage", doc: "The job ended; an empty message means it succeeded.")
    package static let setSuspended = MethodDescriptor<NoReply, Bool>(
        "setSuspended", of: viewV2Interface, "suspended", doc: "The job is paused, or runs again.")
    package static let setTotalAmount = MethodDescriptor<NoReply, UInt64, String>(
        "setTotalAmount", of: viewV2Interface, "amount", "unit", doc: "How much there is to do, in unit: bytes, files, dirs or items.")
    package static let setProcessedAmount = MethodDescriptor<NoReply, UInt64, String>(
        "setProcessedAmount", of: viewV2Interface, "amount", "unit", doc: "How much is done, in unit.")
    package static let setPercent = MethodDescriptor<NoReply, UInt32>(
        "setPercent", of: viewV2Interface, "percent", doc: "How far along, 0 to 100.")
    package static let setSpeed = MethodDescriptor<NoReply, UInt64>(
        "setSpeed", of: viewV2Interface, "bytesPerSecond", doc: "How fast it moves.")
    package static let setInfoMessage = MethodDescriptor<NoReply, String>(
        "setInfoMessage", of: viewV2Interface, "message", doc: "What it does now.")
    package static let setDescriptionField = MethodDescriptor<Bool, UInt32, String, String>(
        "setDescriptionField", of: viewV2Interface, "number", "name", "value", returning: ["res"],
        doc: "Field number (0 or 1, say Source and Destination) is name: value; whether it was taken.")
    package static let clearDescriptionField = MethodDescriptor<NoReply, UInt32>(
        "clearDescriptionField", of: viewV2Interface, "number", doc: "Field number is gone.")
    package static let setDestUrl = MethodDescriptor<NoReply, AnyVariant>(
        "setDestUrl", of: viewV2Interface, "destUrl", doc: "Where the job writes, as a URL in a variant.")
    package static let setError = MethodDescriptor<NoReply, UInt32>(
        "setError", of: viewV2Interface, "errorCode", doc: "The job failed with errorCode; terminate follows.")
    package static let suspendRequestedV2 = SignalDescriptor(
        "suspendRequested", of: viewV2Interface, doc: "The user asked to pause the job.")
    package static let resumeRequestedV2 = SignalDescriptor(
        "resumeRequested", of: viewV2Interface, doc: "The user asked to resume the job.")
    package static let cancelRequestedV2 = SignalDescriptor(
        "cancelRequested", of: viewV2Interface, doc: "The user asked to cancel the job.")

    package static let viewV2 = InterfaceDescriptor(
        viewV2Interface, doc: "A job's view, one setter a field.",
        methods: [
            terminate.declaration, setSuspended.declaration, setTotalAmount.declaration, setProcessedAmount.declaration,
            setPercent.declaration, setSpeed.declaration, setInfoMessage.declaration, setDescriptionField.declaration,
            clearDescriptionField.declaration, setDestUrl.declaration, setError.declaration,
        ],
        properties: [],
        signals: [suspendRequestedV2.declaration, resumeRequestedV2.declaration, cancelRequestedV2.declaration])

    // MARK: - A view, version 3: a dictionary of what changed

    package static let terminateV3 = MethodDescriptor<NoReply, UInt32, String, VariantDictionary>(
        "terminate", of: viewV3Interface, "errorCode", "errorMessage", "hints",
        doc: "The job ended; errorCode 0 means it succeeded.")
    package static let update = MethodDescriptor<NoReply, VariantDictionary>(
        "update", of: viewV3Interface, "properties",
        doc: "What changed: title, infoMessage, descriptionLabel1/2, descriptionValue1/2, percent, speed, processedBytes, totalBytes, suspended, ...")
    package static let updateRequested = SignalDescriptor(
        "updateRequested", of: viewV3Interface, doc: "The server asks for the whole state again.")
    package static let suspendRequestedV3 = SignalDescriptor(
        "suspendRequested", of: viewV3Interface, doc: "The user asked to pause the job.")
    package static let resumeRequestedV3 = SignalDescriptor(
        "resumeRequested", of: viewV3Interface, doc: "The user asked to resume the job.")
    package static let cancelRequestedV3 = SignalDescriptor(
        "cancelRequested", of: viewV3Interface, doc: "The user asked to cancel the job.")

    package static let viewV3 = InterfaceDescriptor(
        viewV3Interface, doc: "A job's view, every change as one dictionary.",
        methods: [terminateV3.declaration, update.declaration], properties: [],
        signals: [
            updateRequested.declaration, suspendRequestedV3.declaration, resumeRequestedV3.declaration,
            cancelRequestedV3.declaration,
        ])
}

/// A `v` argument taken as it comes: the job views' `setDestUrl` carries a URL in whatever type
/// the caller chose, which the bridge does not read.
package struct AnyVariant: DBusRepresentable {
    package static let signature: Signature = "v"
    package let value: Value

    package init?(_ value: Value) {
        guard case .variant = value else { return nil }
        self.value = value
    }
}
