/// fish's hook: the fish_preexec and fish_postexec events.
extension ShellScripts {
    static func fish(commands: ShellCommands, helper: [String]) -> String {
        #"""
        # NetActivity for fish: a command on the list holds a network activity while it runs.
        # From `netactivity shell-init fish`; put `netactivity shell-init fish | source` in
        # ~/.config/fish/config.fish. `netactivity shell-init --help` says what is matched and how.
        set -g __netactivity_helper \#(helper.map(fishQuoted).joined(separator: " "))
        set -q __netactivity_pid; or set -g __netactivity_pid
        set -q __netactivity_fifo; or set -g __netactivity_fifo
        set -g __netactivity_held
        set -g __netactivity_found

        \#(fishKindFunction(commands))

        # Every command in the line is looked up (past assignments, wrappers such as sudo, and
        # keywords), with its first argument that is not an option; string and switch are
        # builtins, so matching costs no fork.
        function __netactivity_scan
            set -l cmd
            set -l sub
            for w in $argv ';'
                switch $w
                    case ';' '&' '|' '(' ')'
                        if test -n "$cmd"; and __netactivity_kind $cmd $sub
                            return 0
                        end
                        set cmd
                        set sub
                    case '*'
                        if test -n "$cmd"
                            if test -z "$sub"; and not string match -q -- '-*' $w
                                set sub $w
                            end
                        else if not contains -- $w sudo command builtin exec nohup env nice time and or not begin if else while
                            and not string match -qr '^[A-Za-z_][A-Za-z0-9_]*=' -- $w
                            set cmd (string replace -r '.*/' '' -- $w)
                        end
                end
            end
            return 1
        end

        function __netactivity_preexec --on-event fish_preexec
            set -l flat (string replace -ra '\s' ' ' -- $argv[1] | string sub -l 512)
            __netactivity_scan (string replace -ra '([;|&()])' ' $1 ' -- $flat | string split -n ' ')
            or return 0
            set -l label (string replace -ra '[\n\r]' ' ' -- $argv[1] | string sub -l 1024)
            __netactivity_send "begin $__netactivity_found $label"; and set -g __netactivity_held 1
            return 0
        end

        function __netactivity_postexec --on-event fish_postexec
            if test -n "$__netactivity_held"
                set -g __netactivity_held
                __netactivity_send end
            end
        end

        # fish cannot hold a descriptor open, so each line opens the helper's FIFO anew, through
        # /proc/PID/fd/0: while the helper lives that is the FIFO, which it holds open read-write
        # (no open blocks, no write fails); once it is gone, so is the path, and nothing waits.
        function __netactivity_send
            if test -z "$__netactivity_pid"; or test (path resolve /proc/$__netactivity_pid/fd/0) != "$__netactivity_fifo"
                test "$argv[1]" = end; and return 1
                __netactivity_start; or return 1
            end
            begin
                echo $argv[1] >/proc/$__netactivity_pid/fd/0
            end 2>/dev/null
        end

        function __netactivity_start
            test -x $__netactivity_helper[1]; or return 1
            test -n "$__netactivity_fifo"; and command rm -f -- $__netactivity_fifo
            set -l dir $XDG_RUNTIME_DIR
            test -n "$dir"; or set dir /tmp
            set -g __netactivity_fifo $dir/netactivity-shell.$fish_pid.(random)(random)
            command mkfifo -m 600 -- $__netactivity_fifo 2>/dev/null; or return 1
            $__netactivity_helper --shell-pid $fish_pid --fifo $__netactivity_fifo </dev/null >/dev/null &
            set -g __netactivity_pid $last_pid
            disown $last_pid 2>/dev/null
            # Ready once its standard input is the FIFO, some milliseconds after it started.
            for i in (string split '' -- (string repeat -n 200 .))
                test (path resolve /proc/$__netactivity_pid/fd/0) = "$__netactivity_fifo"; and return 0
                command sleep 0.01
            end
            return 1
        end
        """#
    }
}
