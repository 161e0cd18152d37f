# fish completion for netactivity; installed by `make install` to
# share/fish/vendor_completions.d/netactivity.fish.

set -l commands status push pop run watch top tray bridge shell-init shell-helper browser-host help version

complete -c netactivity -f
complete -c netactivity -l session-only -d 'leave out the system service'
complete -c netactivity -l system -d 'use the system bus only'
complete -c netactivity -l address -r -d 'use the bus at ADDR'
complete -c netactivity -l system-address -r -d 'the system side is the bus at ADDR'
complete -c netactivity -s h -l help -d 'show the help'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -l version -d 'show the version'

complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a status -d 'show Active, Visible, Count, Progress and activities'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a push -d 'add one to the shared counter'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a pop -d 'take one from the shared counter'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a run -d 'hold an activity while a command runs'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a watch -d 'print a line per state change'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a top -d 'show the activities live, the busiest first'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a tray -d 'show the indicator in the system tray'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a bridge -d 'report what PackageKit and launcher-API apps announce, and app traffic'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a shell-init -d 'print the shell hook that reports curl, git clone, ...'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a browser-host -d "the browser extension's native messaging host"
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a help -d 'show help for a command'
complete -c netactivity -n "not __fish_seen_subcommand_from $commands" -a version -d 'show the version'

complete -c netactivity -n "__fish_seen_subcommand_from status" -l json -d 'print one JSON object'
complete -c netactivity -n "__fish_seen_subcommand_from run" -s l -l label -r -d 'the activity label'
complete -c netactivity -n "__fish_seen_subcommand_from run" -l kind -x -a 'download upload sync update other' -d 'what it is for'
complete -c netactivity -n "__fish_seen_subcommand_from run" -l icon -x -d 'a themed icon name or path'
complete -c netactivity -n "__fish_seen_subcommand_from run" -l application -x -d 'the desktop id it is for'
complete -c netactivity -n "__fish_seen_subcommand_from bridge" -l only -x -a 'packagekit launcher traffic plasma-jobs' -d 'only these sources'
complete -c netactivity -n "__fish_seen_subcommand_from bridge" -l without -x -a 'packagekit launcher traffic plasma-jobs' -d 'all but these sources'
complete -c netactivity -n "__fish_seen_subcommand_from bridge" -l traffic-threshold -x -d 'bytes an app moves within 2 s to be shown'
complete -c netactivity -n "__fish_seen_subcommand_from bridge" -l traffic-ignore -x -d 'desktop ids, program names or (with --system) units never shown'
complete -c netactivity -n "__fish_seen_subcommand_from watch" -s f -l format -x -a 'plain json waybar' -d 'output format'
complete -c netactivity -n "__fish_seen_subcommand_from top" -l once -d 'print one frame and exit'
complete -c netactivity -n "__fish_seen_subcommand_from tray" -l icon -x -d 'themed icon while active'
complete -c netactivity -n "__fish_seen_subcommand_from tray" -l idle-icon -x -d 'themed icon while idle'
complete -c netactivity -n "__fish_seen_subcommand_from tray" -l no-progress-ring -d 'keep the themed icon while the progress is known'
complete -c netactivity -n "__fish_seen_subcommand_from shell-init" -a 'bash zsh fish'
complete -c netactivity -n "__fish_seen_subcommand_from shell-helper" -l shell-pid -x -d 'exit when this process does'
complete -c netactivity -n "__fish_seen_subcommand_from shell-helper" -l fifo -r -d 'read this FIFO instead of standard input'
complete -c netactivity -n "__fish_seen_subcommand_from browser-host" -l install-manifests -d "install the host for this user's browsers"
complete -c netactivity -n "__fish_seen_subcommand_from help" -a "$commands"
