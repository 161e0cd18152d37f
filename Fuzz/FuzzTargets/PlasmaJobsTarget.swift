import DBus
@testable import NetActivityBridge

extension FuzzTarget {
    /// A call on a job the bridge serves off Plasma, as a KDE program sends it: any message,
    /// read as the job view's version 2 setters (by member, as the served object dispatches
    /// them), version 3's `update` and `terminate`, or `requestView`'s hints; what it changes is
    /// applied to a job, whose label and progress the activity would show.
    public static let plasmaJobs = FuzzTarget("plasma-jobs") { bytes in
        guard let message = try? Message(wireBytes: bytes), let arguments = try? message.arguments() else { return }
        var job = ServedJobState()
        func apply(_ read: () throws(JobChange.Refused) -> [JobChange]) {
            if let changes = try? read() { job.apply(changes) }
        }
        let member = message.member?.rawValue ?? ""
        apply { () throws(JobChange.Refused) in try JobChange.version2(member, arguments) }
        if let first = arguments.first, let properties = VariantDictionary(first) {
            apply { () throws(JobChange.Refused) in try JobChange.version3(properties) }
        }
        if let (_, _, hints) = try? JobViewInterfaces.requestViewV2.decode(arguments) {
            apply { () throws(JobChange.Refused) in try JobChange.version3(hints) }
        }
        if let (code, text, _) = try? JobViewInterfaces.terminateV3.decode(arguments) {
            apply { () throws(JobChange.Refused) in try JobChange.version3Terminate(code, text) }
        }
        _ = (job.label, job.progress, job.isNamed)
    }
}
