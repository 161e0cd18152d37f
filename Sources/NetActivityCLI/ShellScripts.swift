/// The code `netactivity shell-init SHELL` prints, for `eval` in a shell's startup file.
///
/// Every shell gets the same design: a hook before each command line and one before each
/// prompt; the match against the command list is done with the shell's own expansions and
/// `case`, so a command that is not on the list costs no fork; the first command that is
/// starts one helper (`netactivity shell-helper`) for the shell's lifetime, which owns the
/// activities and ends them when the shell dies. Lines go to it through a FIFO that bash and
/// zsh hold open read-write and unlink at once: a write never blocks on a missing reader nor
/// raises SIGPIPE in the shell, even when the helper is gone.
enum ShellScripts {
    /// The shells `shell-init` knows.
    enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    /// The code for `shell`, starting `helper` (the program and its bus options) lazily.
    static func text(for shell: Shell, commands: ShellCommands, helper: [String]) -> String {
        switch shell {
        case .bash: bash(commands: commands, helper: helper)
        case .zsh: zsh(commands: commands, helper: helper)
        case .fish: fish(commands: commands, helper: helper)
        }
    }

    // MARK: - The command table

    /// Commands in the order first listed, each with its entries.
    private static func grouped(_ commands: ShellCommands) -> [(command: String, entries: [ShellCommands.Entry])] {
        var groups: [(command: String, entries: [ShellCommands.Entry])] = []
        for entry in commands.entries {
            if let index = groups.firstIndex(where: { $0.command == entry.command }) {
                groups[index].entries.append(entry)
            } else {
                groups.append((entry.command, [entry]))
            }
        }
        return groups
    }

    /// `__netactivity_kind COMMAND SUBCOMMAND`: sets `__netactivity_found` to the kind, or fails.
    /// The words are checked by `ShellCommands` to need no escaping inside single quotes.
    private static func posixKindFunction(_ commands: ShellCommands) -> String {
        var lines = ["__netactivity_kind() {", "    case $1 in"]
        for group in grouped(commands) {
            let plain = group.entries.first { $0.subcommand == nil }
            let subcommands = group.entries.filter { $0.subcommand != nil }
            if subcommands.isEmpty, let plain {
                lines.append("    '\(group.command)') __netactivity_found=\(plain.kind.rawValue) ;;")
                continue
            }
            lines.append("    '\(group.command)')")
            lines.append("        case $2 in")
            for entry in subcommands {
                lines.append("        '\(entry.subcommand ?? "")') __netactivity_found=\(entry.kind.rawValue) ;;")
            }
            lines.append("        *) " + (plain.map { "__netactivity_found=\($0.kind.rawValue)" } ?? "return 1") + " ;;")
            lines.append("        esac")
            lines.append("        ;;")
        }
        lines += ["    *) return 1 ;;", "    esac", "}"]
        return lines.joined(separator: "\n")
    }

    private static func fishKindFunction(_ commands: ShellCommands) -> String {
        var lines = ["function __netactivity_kind", "    switch $argv[1]"]
        for group in grouped(commands) {
            let plain = group.entries.first { $0.subcommand == nil }
            let subcommands = group.entries.filter { $0.subcommand != nil }
            lines.append("        case '\(group.command)'")
            if subcommands.isEmpty, let plain {
                lines.append("            set -g __netactivity_found \(plain.kind.rawValue)")
                continue
            }
            lines.append("            switch \"$argv[2]\"")
            for entry in subcommands {
                lines.append("                case '\(entry.subcommand ?? "")'")
                lines.append("                    set -g __netactivity_found \(entry.kind.rawValue)")
            }
            lines.append("                case '*'")
            lines.append("                    " + (plain.map { "set -g __netactivity_found \($0.kind.rawValue)" } ?? "return 1"))
            lines.append("            end")
        }
        lines += ["        case '*'", "            return 1", "    end", "    return 0", "end"]
        return lines.joined(separator: "\n")
    }

    /// `word` in single quotes for bash and zsh.
    static func posixQuoted(_ word: String) -> String {
        "'" + word.replacing("'", with: #"'\''"#) + "'"
    }

    /// `word` in single quotes for fish, where a backslash escapes inside them too.
    static func fishQuoted(_ word: String) -> String {
        "'" + word.replacing(#"\"#, with: #"\\"#).replacing("'", with: #"\'"#) + "'"
    }

    // MARK: - bash

    private static func bash(commands: ShellCommands, helper: [String]) -> String {
        #"""
        # NetActivity for bash: a command on the list holds a network activity while it runs.
        # From `netactivity shell-init bash`; put `eval "$(netactivity shell-init bash)"` at the
        # end of ~/.bashrc. `netactivity shell-init --help` says what is matched and how.
        __netactivity_helper=(\#(helper.map(posixQuoted).joined(separator: " ")))
        __netactivity_fd=${__netactivity_fd-}
        __netactivity_pid=${__netactivity_pid-}
        __netactivity_held=${__netactivity_held-}
        __netactivity_armed=
        __netactivity_found=
        __netactivity_none=()

        \#(posixKindFunction(commands))

        # The command word (past assignments and wrappers such as sudo) and its first argument
        # that is not an option, found with expansions alone: matching costs no fork. Only the
        # first 512 characters count, so a huge line costs no more than a short one.
        __netactivity_match() {
            local rest=${1:0:512} word= sub=
            while :; do
                rest=${rest#"${rest%%[![:space:]]*}"}
                word=${rest%%[[:space:]]*}
                rest=${rest:${#word}}
                case $word in
                '') return 1 ;;
                sudo | command | builtin | exec | nohup | env | nice | time | [A-Za-z_]*=*) ;;
                *) break ;;
                esac
            done
            while :; do
                rest=${rest#"${rest%%[![:space:]]*}"}
                sub=${rest%%[[:space:]]*}
                rest=${rest:${#sub}}
                case $sub in
                -*) ;;
                *) break ;;
                esac
            done
            word=${word##*/}
            __netactivity_kind "${word#\\}" "$sub"
        }

        # bash has no preexec: the DEBUG trap runs before every simple command, and PS0 (shown
        # only once a command line has been read) arms it, so prompt commands, completions and
        # the hook's own functions are never taken for the user's commands. Each simple command
        # of the line is checked until one matches; the activity then lasts until the prompt.
        __netactivity_debug() {
            [[ -n $__netactivity_armed && -z ${COMP_LINE-} ]] || return 0
            case $BASH_COMMAND in
            __netactivity_*)
                __netactivity_armed=
                return 0
                ;;
            esac
            __netactivity_match "$BASH_COMMAND" || return 0
            __netactivity_armed=
            # The line as typed comes from history: one fork, only for a command that matched.
            # When it is not the line run (HISTCONTROL=ignorespace, history off) the label is the
            # simple command.
            local line
            line=$(HISTTIMEFORMAT= builtin history 1)
            line=${line#"${line%%[!' ']*}"}
            line=${line#"${line%%[!0-9]*}"}
            line=${line#[* ]}
            line=${line#' '}
            # BASH_COMMAND is the command as bash prints it (`>/dev/null` as `> /dev/null`).
            local typed=${line//[[:space:]]/} run=${BASH_COMMAND//[[:space:]]/}
            [[ $typed == *"$run"* ]] || line=$BASH_COMMAND
            line=${line:0:1024}
            __netactivity_send "begin $__netactivity_found ${line//[$'\n\r']/ }" && __netactivity_held=1
            return 0
        }

        __netactivity_precmd() {
            local status=$?
            __netactivity_armed=
            if [[ -n $__netactivity_held ]]; then
                __netactivity_held=
                __netactivity_send end
            fi
            return $status
        }

        # One line to the helper, started first if it is not running: its standard input is
        # still this shell's FIFO while it lives (the pid alone could have been reused).
        __netactivity_send() {
            if [[ -z $__netactivity_pid || ! /proc/$__netactivity_pid/fd/0 -ef /proc/self/fd/$__netactivity_fd ]]; then
                [[ $1 == end ]] && return 1
                __netactivity_start || return 1
            fi
            builtin printf '%s\n' "$1" >&"$__netactivity_fd"
        }

        __netactivity_start() {
            local fifo=${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/netactivity-shell.$$.$RANDOM$RANDOM
            command mkfifo -m 600 -- "$fifo" 2>/dev/null || return 1
            [[ -n $__netactivity_fd ]] && exec {__netactivity_fd}>&-
            exec {__netactivity_fd}<>"$fifo"
            command rm -f -- "$fifo"
            # Started from a command substitution, where job control is off: no job number is
            # printed, the helper is no job of the user's, and a pipeline the trap interrupted
            # keeps its process group (toggling `set -m` here would take the terminal from it).
            __netactivity_pid=$("${__netactivity_helper[@]}" --shell-pid $$ <&"$__netactivity_fd" >/dev/null & builtin echo $!)
            [[ -n $__netactivity_pid ]]
        }

        # Installed once, however often this is evaluated; a DEBUG trap already set runs first.
        if [[ ${PROMPT_COMMAND-} != *__netactivity_precmd* ]]; then
            PROMPT_COMMAND="__netactivity_precmd${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}"
        fi
        if [[ ${PS0-} != *__netactivity_armed* ]]; then
            PS0=${PS0-}'${__netactivity_none[__netactivity_armed=1]-}'
        fi
        __netactivity_trap=$(trap -p DEBUG)
        if [[ $__netactivity_trap != *__netactivity_debug* ]]; then
            eval "__netactivity_trap=(${__netactivity_trap#trap -- })"
            trap -- "${__netactivity_trap[0]:+${__netactivity_trap[0]}$'\n'}__netactivity_debug" DEBUG
        fi
        unset __netactivity_trap
        """#
    }

    // MARK: - zsh

    private static func zsh(commands: ShellCommands, helper: [String]) -> String {
        #"""
        # NetActivity for zsh: a command on the list holds a network activity while it runs.
        # From `netactivity shell-init zsh`; put `eval "$(netactivity shell-init zsh)"` in
        # ~/.zshrc. `netactivity shell-init --help` says what is matched and how.
        typeset -ga __netactivity_helper
        __netactivity_helper=(\#(helper.map(posixQuoted).joined(separator: " ")))
        typeset -g __netactivity_fd=${__netactivity_fd-} __netactivity_pid=${__netactivity_pid-}
        typeset -g __netactivity_held=${__netactivity_held-} __netactivity_found=

        \#(posixKindFunction(commands))

        # The words of a line ((z) splits them as the shell would): every command in it is
        # looked up (past assignments, wrappers such as sudo, and keywords), with its first
        # argument that is not an option. Expansions alone: matching costs no fork.
        __netactivity_scan() {
            local w cmd= sub=
            for w in "$@" ';'; do
                case $w in
                (';' | '&&' | '||' | '|' | '|&' | '&' | '&!' | '&|' | '(' | ')' | '{' | '}' | '()')
                    if [[ -n $cmd ]] && __netactivity_kind "$cmd" "$sub"; then return 0; fi
                    cmd= sub=
                    ;;
                (*)
                    if [[ -n $cmd ]]; then
                        [[ -z $sub && $w != -* ]] && sub=$w
                    else
                        case $w in
                        (sudo | command | builtin | exec | nohup | env | nice | time | noglob | nocorrect | '!' | if | then | else | elif | do | while | until | [A-Za-z_]*=*) ;;
                        (*)
                            cmd=${w:t}
                            cmd=${cmd#\\}
                            ;;
                        esac
                    fi
                    ;;
                esac
            done
            return 1
        }

        # $1 is the line as typed (the label), $3 the text run, aliases expanded (matched).
        # Only the first 512 characters are matched, so a huge line costs no more than a short one.
        __netactivity_preexec() {
            emulate -L zsh
            __netactivity_scan ${(z)${3[1,512]}} || return 0
            local line=${1[1,1024]}
            __netactivity_send "begin $__netactivity_found ${line//[$'\n\r']/ }" && __netactivity_held=1
            return 0
        }

        __netactivity_precmd() {
            emulate -L zsh
            if [[ -n $__netactivity_held ]]; then
                __netactivity_held=
                __netactivity_send end
            fi
            return 0
        }

        # One line to the helper, started first if it is not running: its standard input is
        # still this shell's FIFO while it lives (the pid alone could have been reused).
        __netactivity_send() {
            emulate -L zsh
            if [[ -z $__netactivity_pid || ! /proc/$__netactivity_pid/fd/0 -ef /proc/self/fd/$__netactivity_fd ]]; then
                [[ $1 == end ]] && return 1
                __netactivity_start || return 1
            fi
            print -r -- "$1" >&$__netactivity_fd
        }

        __netactivity_start() {
            emulate -L zsh
            local fifo=${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/netactivity-shell.$$.$RANDOM$RANDOM
            command mkfifo -m 600 -- $fifo 2>/dev/null || return 1
            [[ -n $__netactivity_fd ]] && exec {__netactivity_fd}>&-
            exec {__netactivity_fd}<>$fifo
            command rm -f -- $fifo
            # &! disowns at once: no job number is printed and the helper is no job of the user's.
            $__netactivity_helper --shell-pid $$ <&$__netactivity_fd >/dev/null &!
            __netactivity_pid=$!
            return 0
        }

        autoload -Uz add-zsh-hook
        add-zsh-hook preexec __netactivity_preexec
        add-zsh-hook precmd __netactivity_precmd
        """#
    }

    // MARK: - fish

    private static func fish(commands: ShellCommands, helper: [String]) -> String {
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
