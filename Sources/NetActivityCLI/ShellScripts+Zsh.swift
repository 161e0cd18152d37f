/// zsh's hook: add-zsh-hook preexec and precmd.
extension ShellScripts {
    static func zsh(commands: ShellCommands, helper: [String]) -> String {
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
}
