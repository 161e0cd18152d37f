# bash completion for netactivity                                    -*- shell-script -*-
# Installed by `make install` to share/bash-completion/completions/netactivity.

_netactivity() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="status push pop run watch top tray bridge shell-init browser-host help version"
    local global="--session-only --system --address --system-address --help --version"

    # The command is the first word after the global options (and the addresses).
    local i command="" command_index=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        --address | --system-address) ((i++)) ;;
        -*) ;;
        *) command=${COMP_WORDS[i]}; command_index=$i; break ;;
        esac
    done

    case $prev in
    --address | --system-address)
        COMPREPLY=($(compgen -W "unix:path=" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
    -f | --format) COMPREPLY=($(compgen -W "plain json waybar" -- "$cur")); return ;;
    --icon | --idle-icon) COMPREPLY=(); return ;;
    -l | --label | --application) COMPREPLY=(); return ;;
    --kind) COMPREPLY=($(compgen -W "download upload sync update other" -- "$cur")); return ;;
    --only | --without) COMPREPLY=($(compgen -W "packagekit launcher traffic plasma-jobs" -- "$cur")); return ;;
    --traffic-threshold | --traffic-ignore) COMPREPLY=(); return ;;
    esac

    if [ -z "$command" ]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    # The bus options are taken after the command too.
    local bus="--session-only --system --address --system-address"
    case $command in
    status) COMPREPLY=($(compgen -W "--json --help $bus" -- "$cur")) ;;
    push | pop | version) COMPREPLY=($(compgen -W "--help $bus" -- "$cur")) ;;
    watch) COMPREPLY=($(compgen -W "--format --help $bus" -- "$cur")) ;;
    top) COMPREPLY=($(compgen -W "--once --help $bus" -- "$cur")) ;;
    tray) COMPREPLY=($(compgen -W "--icon --idle-icon --no-progress-ring --help $bus" -- "$cur")) ;;
    bridge) COMPREPLY=($(compgen -W "--only --without --traffic-threshold --traffic-ignore --help $bus" -- "$cur")) ;;
    shell-init) ((COMP_CWORD == command_index + 1)) && COMPREPLY=($(compgen -W "bash zsh fish --help $bus" -- "$cur")) ;;
    shell-helper) COMPREPLY=($(compgen -W "--shell-pid --fifo --help $bus" -- "$cur")) ;;
    browser-host) COMPREPLY=($(compgen -W "--install-manifests --help $bus" -- "$cur")) ;;
    help) ((COMP_CWORD == command_index + 1)) && COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
    run)
        # After --, the command to run and its arguments.
        for ((i = command_index + 1; i < COMP_CWORD; i++)); do
            if [ "${COMP_WORDS[i]}" = -- ]; then
                if ((COMP_CWORD == i + 1)); then
                    COMPREPLY=($(compgen -c -- "$cur"))
                else
                    COMPREPLY=($(compgen -f -- "$cur"))
                fi
                return
            fi
        done
        COMPREPLY=($(compgen -W "--label --kind --icon --application -- --help $bus" -- "$cur"))
        ;;
    esac
}
complete -F _netactivity netactivity
