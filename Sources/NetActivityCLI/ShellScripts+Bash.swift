/// bash's hook: a DEBUG trap armed by PS0, and PROMPT_COMMAND.
extension ShellScripts {
    static func bash(commands: ShellCommands, helper: [String]) -> String {
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
            # The armed test inline: before most commands the trap is that one test, no call.
            trap -- "${__netactivity_trap[0]:+${__netactivity_trap[0]}$'\n'}"'[[ -z $__netactivity_armed ]] || __netactivity_debug' DEBUG
        fi
        unset __netactivity_trap
        """#
    }
}
