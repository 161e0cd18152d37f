@testable import DesktopApplications
import Testing

/// The program name in `/proc/PID/cmdline`, as the kernel gives it: arguments separated by NULs,
/// or one string for a process that set its title (Chromium's browser process does, with its
/// whole command line, the last argument a URL).
@Suite struct ProcessTitleTests {
    @Test(arguments: [
        ("/usr/lib/chromium/chromium\0--headless=new\0http://127.0.0.1:8080/report.bin\0", "chromium"),
        ("/usr/lib/chromium/chromium --enable-remote-extensions http://127.0.0.1:8080/report.bin\0", "chromium"),
        ("/usr/lib/chromium/chromium --type=zygote --no-zygote-sandbox", "chromium"),
        ("firefox-esr\0-contentproc\0", "firefox-esr"),
        ("pkcon\0refresh\0", "pkcon"),
        ("/bin/sh\0", "sh"),
    ])
    func readsTheProgram(commandLine: String, program: String) {
        #expect(Processes.programName(inCommandLine: Array(commandLine.utf8)) == program)
    }

    @Test(arguments: ["", "\0", "/\0", "\u{1B}[31m\0", " --flag"])
    func namesNothingThatIsNoProgram(commandLine: String) {
        #expect(Processes.programName(inCommandLine: Array(commandLine.utf8)) == nil)
    }
}
