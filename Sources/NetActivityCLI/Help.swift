
/// The help texts, one per command.
enum Help {
    static func text(for topic: String?) -> String {
        switch topic {
        case "status": status
        case "push": push
        case "pop": pop
        case "run": run
        case "watch": watch
        case "top": top
        case "tray": tray
        case "bridge": bridge
        case "version": version
        case "help": help
        case "shell-init": shellInit
        case "shell-helper": shellHelper
        case "browser-host": browserHost
        default: main
        }
    }

    static let main = """
        Usage: netactivity [BUS OPTIONS] COMMAND [OPTIONS]

        Reports and shows the desktop's network activity (io.github.netactivity.NetActivity1).
        status, watch, top and tray show the session's and the system's service as one
        indicator.

        Commands:
          status [--json]                    show Active, Visible, Count, Progress and activities
          push                               add one to the shared counter
          pop                                take one from the shared counter
          run [--label TEXT] [--kind KIND] -- CMD [ARGS]
                                             hold an activity while CMD runs
          watch [--format plain|json|waybar] print a line per state change (for panels)
          top [--once]                       show the activities live, the busiest first
          tray [--icon NAME] [--idle-icon NAME] [--no-progress-ring]
                                             show the indicator in the system tray
          bridge [--only|--without SOURCES]  report what PackageKit and launcher-API apps announce,
                                             and what apps move over the network
          shell-init bash|zsh|fish           print the shell hook: curl, git clone, ... report
          browser-host [--install-manifests] the browser extension's native messaging host:
                                             browser downloads with their names and progress
          help [COMMAND]                     show help for a command
          version                            show the version

        Global options:
          --session-only          status, watch, top, tray: leave out the system service
          --system                use the system bus only
          --address ADDR          use the bus at ADDR (as the session side; followed alone
                                  unless --system-address names a system side)
          --system-address ADDR   status, watch, top, tray: the system side's bus is at ADDR
                                  (default: the system bus)
          -h, --help              show this help
          --version               show the version

        push, pop and run report to one bus: the session bus, or the one --system or
        --address names. A missing system bus (as in most containers) only means no system
        entries.

        Exit status: 0 on success, 1 when the bus or the service refuses or cannot be reached,
        2 for a usage error; `run` exits with the command's status.
        """

    static let status = """
        Usage: netactivity status [--json]

        Shows whether the network is in use: Active, Visible (the debounced state a panel shows),
        Count, overall Progress, and every tracked activity with its application, owner, process
        and progress. The session's and the system's service are read once each and shown as one
        indicator (Count summed, system activities titled "system: "); --session-only leaves out
        the system. Fails only when neither service can be read.

          --json    print one JSON object (stable keys: active, visible, count, progress,
                    activities, service) instead of text
        """

    static let push = """
        Usage: netactivity push

        Adds one to the service's shared counter. The counter is not tied to this process:
        balance it with `netactivity pop`, from this or any other process.
        """

    static let pop = """
        Usage: netactivity pop

        Takes one from the shared counter. At zero the service refuses (NotActive): the error is
        printed and the exit status is 1.
        """

    static let run = """
        Usage: netactivity run [--label TEXT] [--kind KIND] [--icon NAME] [--application ID] -- CMD [ARGS...]

        Runs CMD while holding a tracked activity labelled TEXT (default: the command line).
        SIGINT and SIGTERM are passed on to CMD. Exits with CMD's status, or 128+N when CMD died of
        signal N. If netactivity itself is killed, the service ends the activity on its own.

          -l, --label TEXT       the activity's label; one longer than the service's 256
                                 bytes is cut to fit, with a warning, and CMD still runs
          --kind KIND            what it is for: download, upload, sync, update or other
          --icon NAME            a themed icon name or an absolute path panels show with it
          --application ID       the desktop application id it is for (org.gnome.Software)
        """

    static let watch = """
        Usage: netactivity watch [--format plain|json|waybar]

        Prints the current state, then one line per change, flushed at once (for panels reading a
        pipe). Follows the session's and the system's service as one indicator (--session-only:
        the session's alone); JSON marks each activity with "bus". Keeps going while either
        service or bus restarts, is missing or goes away; prints an idle state while both are gone.
        Exits with status 0 as soon as its reader closes the pipe, even while nothing changes.

          -f, --format plain    a short line for people (default)
          -f, --format json     one JSON state object per line
          -f, --format waybar   waybar custom-module JSON: text, tooltip, class (active/idle) and
                                percentage where progress is known
        """

    static let top = """
        Usage: netactivity top [--once]

        Shows the network activity on the whole terminal, like top: a summary line (how many,
        overall progress, total rate, time left), the total rate over the last minute as a
        sparkline, and a row per activity, the busiest first: the application and label, its
        kind, rate, bytes moved, percent done and time left where known. Follows the session's
        and the system's service as one indicator (--session-only: the session's alone), as
        the services signal changes: at most one frame a second, a frame a second while
        something is active, and nothing at all while nothing is. Fits the terminal's width
        and height and follows its size. q quits; so do Ctrl-C, SIGTERM and SIGHUP, with status
        0; Ctrl-Z suspends. The terminal is left as it was.

          --once    print one frame and exit: as wide and as high as the terminal, or, into a
                    pipe or file, $COLUMNS (default 80) wide with every activity listed
        """

    static let tray = """
        Usage: netactivity tray [--icon NAME] [--idle-icon NAME] [--no-progress-ring]

        Shows the indicator in the system tray as a StatusNotifierItem (KDE Plasma, waybar's
        tray, GNOME with the AppIndicator extension, XFCE, LXQt, sway bars with a tray). The item
        follows the debounced Visible state: status Active with the activity icon while network
        activity shows, Passive with the idle icon otherwise (most trays hide passive items).
        While the overall progress is known, the icon is drawn: a ring filled to the percent.
        Its tooltip lists the live activities with their progress, the system service's as
        "system: …" (--session-only leaves them out). It registers with the
        StatusNotifierWatcher again whenever the panel restarts, asks again after a pause (growing
        to a minute) while the watcher refuses or does not answer, waits while no tray is running,
        and follows both services through restarts. The item lives on the session bus (or the
        one --address names), where the panel is, also with --system. SIGINT and SIGTERM end it
        with status 0.

          --icon NAME         themed icon (or icon file path) while active
                              (default: io.github.netactivity.NetActivity-active)
          --idle-icon NAME    themed icon while idle
                              (default: io.github.netactivity.NetActivity-idle)
          --no-progress-ring  keep the themed icon while the progress is known

        NetActivity's own icons are in hicolor, which every icon theme falls back to. The same
        icons in the panel's text colour are io.github.netactivity.NetActivity-active-symbolic
        and io.github.netactivity.NetActivity-idle-symbolic. The item's IconThemePath points
        hosts at them: at the source tree's data/icons when the tray runs from a build there,
        else at share/icons beside the bin folder it runs from.
        """

    static let bridge = """
        Usage: netactivity bridge [--only SOURCES | --without SOURCES] [--system]
                                  [--traffic-threshold BYTES] [--traffic-ignore IDS]

        Reports to the session's service the transfers other programs already announce on D-Bus,
        and those it observes, so the indicator shows them with no app changed. SOURCES is a
        comma-separated list of:

          packagekit   PackageKit's transactions on the system bus (GNOME Software, KDE
                       Discover, pkcon): refreshing package lists, downloading updates
          launcher     the Unity launcher API's progress on the session bus (Electron apps,
                       libunity apps); the bridge owns com.canonical.Unity while no dock does,
                       so those apps send it
          traffic      what this user's applications move over TCP (and QUIC, roughly), from
                       the kernel's socket counters: an activity per application that moves
                       more than --traffic-threshold bytes (default 262144) within 2 s, counted
                       from its sockets' first bytes, ended after 5 s below a tenth of it; none
                       for an application that reports its own. Whatever runs in this user's
                       session counts, sudo's programs too; system services and another user's
                       traffic are never shown
          plasma-jobs  Plasma's job list: on Plasma, every reported transfer that lasts 3 s
                       shows there as a job (what traffic observed does not); elsewhere the
                       bridge owns org.kde.JobViewServer (until plasmashell takes it) and each
                       KDE program's job (a KIO copy) is an activity

          --system                    the system-side bridge (a system service, one per
                                      machine): the traffic source only, reporting each system
                                      service's transfers (apt-daily, snapd, fwupd) to the
                                      system bus's service, labelled with the unit's
                                      Description; packagekit.service is never shown
          --traffic-threshold BYTES   the traffic source's begin threshold
          --traffic-ignore IDS        desktop ids or program names it never shows, comma-separated
                                      (with --system: unit names, such as snapd.service)

        Reads only what the buses broadcast to every session and what the kernel tells every user
        of their own sockets; needs no privileges. A source that cannot start is said once and
        the others go on. One bridge runs per session (io.github.netactivity.Bridge): a second
        one leaves at once. If the bridge dies, the service ends everything it reported.
        """

    static let version = """
        Usage: netactivity version

        Prints the version of this netactivity (the same as `netactivity --version`). The
        service's own version is its Version property.
        """

    static let help = """
        Usage: netactivity help [COMMAND]

        Shows the help for COMMAND (status, push, pop, run, watch, top, tray, bridge, shell-init,
        browser-host, version, help), or the overview without one. `netactivity COMMAND --help`
        shows the same.
        """

    static let shellInit = """
        Usage: netactivity shell-init bash|zsh|fish

        Prints shell code that makes every command on a list hold a network activity, labelled
        with its command line, for as long as it runs. Load it from the shell's startup file:

          bash   eval "$(netactivity shell-init bash)"    at the end of ~/.bashrc
          zsh    eval "$(netactivity shell-init zsh)"     in ~/.zshrc
          fish   netactivity shell-init fish | source     in ~/.config/fish/config.fish

        The list (NETACTIVITY_SHELL_COMMANDS, read when shell-init runs) is a comma-separated
        list of entries: a command, optionally one subcommand, optionally =KIND (download,
        upload, sync, update, other; other when left out). The entry "defaults" stands for the
        default list:

          curl wget apt apt-get pip pip3 npm cargo git clone|fetch|pull docker pull  download
          git push scp                                                              upload
          rsync                                                                     sync
          sftp                                                                      other

          NETACTIVITY_SHELL_COMMANDS='defaults, yt-dlp=download, rclone sync=sync'

        A command matches by name (/usr/bin/curl is curl), past assignments and sudo, env,
        nice, nohup, command, exec; its subcommand is its first argument that is not an option.
        zsh and fish look at every command of the line, bash at each one it runs; the first that
        matches holds one activity until the prompt returns. A background job (cmd &) is held
        only until then: use `netactivity run` for one. Other commands cost no fork. One helper
        process per shell (shell-helper), started at the first matching command, owns the
        activities; when the shell exits or is killed, they end. The bus options given to
        shell-init (--address, --system) are the helper's.
        """

    static let shellHelper = """
        Usage: netactivity shell-helper [--shell-pid PID] [--fifo PATH]

        The process behind shell-init's hook, one per shell: reads lines on standard input (or
        from the FIFO at PATH, which it removes on exit), "begin KIND LABEL" to begin an activity
        (KIND: download, upload, sync, update, other or -) and "end" to end it; a new begin ends
        the one before. Exits at the end of its input or when process PID (the shell) exits,
        and with it every activity it holds ends.
        """

    static let browserHost = """
        Usage: netactivity browser-host [--install-manifests]

        The native messaging host io.github.netactivity.browser, which the NetActivity browser
        extension (Firefox, Chromium, Chrome) starts while a download is in progress: each
        download is one activity, labelled with its file's name ("Private download" for a
        private window's), for the browser's application with its icon, kind download, with its
        bytes and size. It ends when the download completes, fails, is cancelled or erased; a
        paused one stays. Reads the extension's messages on standard input (a 32-bit length,
        then UTF-8 JSON) and exits when the browser closes it, ending every activity; refuses
        what is no download message, once said on standard error. Arguments that are not
        options (the caller, as browsers give it) are ignored.

          --install-manifests   install the host for this user instead: a wrapper in
                                ~/.local/lib/netactivity running this netactivity, and its
                                manifest where Firefox, Chromium, Google Chrome, Brave and
                                Vivaldi look; prints each file written
        """
}
