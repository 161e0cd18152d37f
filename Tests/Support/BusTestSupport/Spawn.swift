import Foundation
import PrivateBusLauncher

#if canImport(Glibc)
import Glibc
#endif

/// A child just started by `spawn`, with the parent's ends of its pipes.
struct SpawnedChild {
    var pid: pid_t
    /// Write end of the child's stdin, or nil when stdin is `/dev/null`.
    var stdin: Int32?
    var stdout: Int32
    var stderr: Int32
}

/// Starts `executable` (`launch`, with the test process's environment minus any ambient bus,
/// plus `environment`), its stdout and stderr on fresh pipes.
///
/// - Throws: `BusTestError` if the executable is missing (naming its package) or cannot be
///   started.
func spawn(
    _ executable: String, _ arguments: [String], environment: [String: String], pipeStdin: Bool
) throws -> SpawnedChild {
    var opened: [Int32] = []
    func makePipe() throws -> (read: Int32, write: Int32) {
        guard let ends = closeOnExecPipe() else {
            let error = BusTestError("pipe2 failed: \(String(cString: strerror(errno)))")
            opened.forEach { _ = close($0) }
            throw error
        }
        opened += [ends.read, ends.write]
        return ends
    }
    let output = try makePipe()
    let errors = try makePipe()
    let input = pipeStdin ? try makePipe() : nil

    let pid: pid_t
    do {
        pid = try launch(
            executable, arguments, environment: busFreeEnvironment(adding: environment),
            stdin: input.map { .descriptor($0.read) } ?? .null, stdout: .descriptor(output.write),
            stderr: .descriptor(errors.write))
    } catch {
        opened.forEach { _ = close($0) }
        if let missing = error.missingExecutable { throw missingTool(missing) }
        throw BusTestError(error.description)
    }
    // The child has its copies now; the parent keeps only its own ends.
    _ = close(output.write)
    _ = close(errors.write)
    if let input { _ = close(input.read) }
    return SpawnedChild(pid: pid, stdin: input?.write, stdout: output.read, stderr: errors.read)
}
