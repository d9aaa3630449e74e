# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_sticky_global_optspecs
    string join \n p/prompt= a/agent= m/model= wait= no-wait carry= carry-max= no-carry fork stdin= C= t/thread= json q/quiet h/help V/version
end

function __fish_sticky_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_sticky_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_sticky_using_subcommand
    set -l cmd (__fish_sticky_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c sticky -n "__fish_sticky_needs_command" -s p -l prompt -d 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order' -r
complete -c sticky -n "__fish_sticky_needs_command" -s a -l agent -d 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session\'s starts a new session' -r
complete -c sticky -n "__fish_sticky_needs_command" -s m -l model -d 'The model for the session; a different model than the session\'s starts a new session' -r
complete -c sticky -n "__fish_sticky_needs_command" -l wait -d 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)' -r
complete -c sticky -n "__fish_sticky_needs_command" -l carry -d 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky\'s own record: the old session\'s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration\'s `carry_on_change` makes this the default for a change of model or agent' -r -f -a "recap\t'sticky\'s own record of the old session: its prompts and answers, newest first'
summary\t'A handoff summary the old session writes in one extra turn'
off\t'Nothing is carried'"
complete -c sticky -n "__fish_sticky_needs_command" -l carry-max -d 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit' -r
complete -c sticky -n "__fish_sticky_needs_command" -l stdin -d 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration\'s `stdin`, else auto)' -r -f -a "auto\t'Read input from this command line\'s own pipeline however late it comes; go on without a pipe from elsewhere that stays silent for 3 seconds'
wait\t'Read stdin to its end, however long that takes'
skip\t'Never read stdin'"
complete -c sticky -n "__fish_sticky_needs_command" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_needs_command" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_needs_command" -l no-wait -d 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database\'s lock'
complete -c sticky -n "__fish_sticky_needs_command" -l no-carry -d 'Carry no recap, even where the configuration\'s `carry_on_change` would'
complete -c sticky -n "__fish_sticky_needs_command" -l fork -d 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration\'s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT'
complete -c sticky -n "__fish_sticky_needs_command" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_needs_command" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_needs_command" -s V -l version -d 'Print version'
complete -c sticky -n "__fish_sticky_needs_command" -a "new" -d 'Start a fresh session for this conversation, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)'
complete -c sticky -n "__fish_sticky_needs_command" -a "fork" -d 'Make thread NAME a fork of this conversation\'s live session, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)'
complete -c sticky -n "__fish_sticky_needs_command" -a "status" -d 'Show the project, the conversation, its session and the last turn'
complete -c sticky -n "__fish_sticky_needs_command" -a "log" -d 'List the turns of this conversation across all its sessions'
complete -c sticky -n "__fish_sticky_needs_command" -a "sessions" -d 'List the sessions of this conversation, with their lineage'
complete -c sticky -n "__fish_sticky_needs_command" -a "threads" -d 'List the conversations (threads) of this project'
complete -c sticky -n "__fish_sticky_needs_command" -a "init" -d 'Make the current directory (or `-C DIR`) a sticky project of its own'
complete -c sticky -n "__fish_sticky_needs_command" -a "agents" -d 'List the agents sticky knows: whether each is installed, its path and its version'
complete -c sticky -n "__fish_sticky_needs_command" -a "config" -d 'Show the effective settings and where each came from'
complete -c sticky -n "__fish_sticky_needs_command" -a "doctor" -d 'Explain what the next turn would use and why, and what stands in its way'
complete -c sticky -n "__fish_sticky_needs_command" -a "prompt" -d 'Print a one-line status for a shell prompt: agent, short session ID, last turn\'s status'
complete -c sticky -n "__fish_sticky_needs_command" -a "export" -d 'Write the conversation and its agent session\'s files to one file, for `sticky import` in another directory, HOME or machine'
complete -c sticky -n "__fish_sticky_needs_command" -a "import" -d 'Add a conversation written by `sticky export` to this project: the next turn resumes the same agent session, with its whole history'
complete -c sticky -n "__fish_sticky_needs_command" -a "relocate" -d 'Carry the conversations forward after the project directory moved or was renamed'
complete -c sticky -n "__fish_sticky_needs_command" -a "forget" -d 'Delete this conversation (or `-t THREAD`) for good: its sessions, its turns and the copies of its sessions\' files in sticky\'s vault'
complete -c sticky -n "__fish_sticky_needs_command" -a "show" -d 'Print a turn\'s answer again, exactly as it was printed'
complete -c sticky -n "__fish_sticky_needs_command" -a "trust" -d 'Adopt this project\'s state as yours: a `.sticky/` (or a database kept elsewhere) you copied, restored or cloned on purpose'
complete -c sticky -n "__fish_sticky_needs_command" -a "usage" -d 'Sum the tokens and cost of the turns by day, week, month, thread, session, model or agent'
complete -c sticky -n "__fish_sticky_needs_command" -a "search" -d 'Find the turns whose prompt or kept answer holds every word of TEXT'
complete -c sticky -n "__fish_sticky_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c sticky -n "__fish_sticky_using_subcommand new" -s p -l prompt -d 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order' -r
complete -c sticky -n "__fish_sticky_using_subcommand new" -s a -l agent -d 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session\'s starts a new session' -r
complete -c sticky -n "__fish_sticky_using_subcommand new" -s m -l model -d 'The model for the session; a different model than the session\'s starts a new session' -r
complete -c sticky -n "__fish_sticky_using_subcommand new" -l wait -d 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)' -r
complete -c sticky -n "__fish_sticky_using_subcommand new" -l carry -d 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky\'s own record: the old session\'s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration\'s `carry_on_change` makes this the default for a change of model or agent' -r -f -a "recap\t'sticky\'s own record of the old session: its prompts and answers, newest first'
summary\t'A handoff summary the old session writes in one extra turn'
off\t'Nothing is carried'"
complete -c sticky -n "__fish_sticky_using_subcommand new" -l carry-max -d 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit' -r
complete -c sticky -n "__fish_sticky_using_subcommand new" -l stdin -d 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration\'s `stdin`, else auto)' -r -f -a "auto\t'Read input from this command line\'s own pipeline however late it comes; go on without a pipe from elsewhere that stays silent for 3 seconds'
wait\t'Read stdin to its end, however long that takes'
skip\t'Never read stdin'"
complete -c sticky -n "__fish_sticky_using_subcommand new" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand new" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand new" -l no-wait -d 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database\'s lock'
complete -c sticky -n "__fish_sticky_using_subcommand new" -l no-carry -d 'Carry no recap, even where the configuration\'s `carry_on_change` would'
complete -c sticky -n "__fish_sticky_using_subcommand new" -l fork -d 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration\'s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT'
complete -c sticky -n "__fish_sticky_using_subcommand new" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand new" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand new" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand fork" -s p -l prompt -d 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order' -r
complete -c sticky -n "__fish_sticky_using_subcommand fork" -s a -l agent -d 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session\'s starts a new session' -r
complete -c sticky -n "__fish_sticky_using_subcommand fork" -s m -l model -d 'The model for the session; a different model than the session\'s starts a new session' -r
complete -c sticky -n "__fish_sticky_using_subcommand fork" -l wait -d 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)' -r
complete -c sticky -n "__fish_sticky_using_subcommand fork" -l carry -d 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky\'s own record: the old session\'s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration\'s `carry_on_change` makes this the default for a change of model or agent' -r -f -a "recap\t'sticky\'s own record of the old session: its prompts and answers, newest first'
summary\t'A handoff summary the old session writes in one extra turn'
off\t'Nothing is carried'"
complete -c sticky -n "__fish_sticky_using_subcommand fork" -l carry-max -d 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit' -r
complete -c sticky -n "__fish_sticky_using_subcommand fork" -l stdin -d 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration\'s `stdin`, else auto)' -r -f -a "auto\t'Read input from this command line\'s own pipeline however late it comes; go on without a pipe from elsewhere that stays silent for 3 seconds'
wait\t'Read stdin to its end, however long that takes'
skip\t'Never read stdin'"
complete -c sticky -n "__fish_sticky_using_subcommand fork" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand fork" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand fork" -l no-wait -d 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database\'s lock'
complete -c sticky -n "__fish_sticky_using_subcommand fork" -l no-carry -d 'Carry no recap, even where the configuration\'s `carry_on_change` would'
complete -c sticky -n "__fish_sticky_using_subcommand fork" -l fork -d 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration\'s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT'
complete -c sticky -n "__fish_sticky_using_subcommand fork" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand fork" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand fork" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand status" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand status" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand status" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand status" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand status" -s h -l help -d 'Print help'
complete -c sticky -n "__fish_sticky_using_subcommand log" -s n -l limit -d 'Show only the last N turns' -r
complete -c sticky -n "__fish_sticky_using_subcommand log" -l since -d 'Show only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, in UTC as `log` shows times) or a duration back from now (`90m`, `2h`, `3d`, `1w`)' -r
complete -c sticky -n "__fish_sticky_using_subcommand log" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand log" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand log" -l answers -d 'Show each turn\'s kept answer under it'
complete -c sticky -n "__fish_sticky_using_subcommand log" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand log" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand log" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand sessions" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand sessions" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand sessions" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand sessions" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand sessions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand threads" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand threads" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand threads" -l prune -d 'Forget the threads whose git branch was deleted, or merged into the default branch (and is checked out nowhere), with their sessions, turns and vault copies, as `sticky forget` does. Lists them and asks first when stdin is a terminal; `--yes` confirms without asking, and is needed when stdin is not a terminal. A thread running a turn is left'
complete -c sticky -n "__fish_sticky_using_subcommand threads" -s y -l yes -d 'Prune without asking'
complete -c sticky -n "__fish_sticky_using_subcommand threads" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand threads" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand threads" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand init" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand init" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand init" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand init" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand init" -s h -l help -d 'Print help'
complete -c sticky -n "__fish_sticky_using_subcommand agents" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand agents" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand agents" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand agents" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand agents" -s h -l help -d 'Print help'
complete -c sticky -n "__fish_sticky_using_subcommand config" -s a -l agent -d 'Report as if the turn was run with `--agent NAME`' -r
complete -c sticky -n "__fish_sticky_using_subcommand config" -s m -l model -d 'Report as if the turn was run with `--model MODEL`' -r
complete -c sticky -n "__fish_sticky_using_subcommand config" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand config" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand config" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand config" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand config" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand doctor" -s a -l agent -d 'Report as if the turn was run with `--agent NAME`' -r
complete -c sticky -n "__fish_sticky_using_subcommand doctor" -s m -l model -d 'Report as if the turn was run with `--model MODEL`' -r
complete -c sticky -n "__fish_sticky_using_subcommand doctor" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand doctor" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand doctor" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand doctor" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand prompt" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand prompt" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand prompt" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand prompt" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand prompt" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand export" -s o -l output -d 'Write the bundle to FILE (`-` for stdout, the default when stdout is not a terminal). FILE may be a new file, an empty one or an earlier bundle; never a directory nor a path in sticky\'s own state (`.sticky/`, the database and its companions)' -r -F
complete -c sticky -n "__fish_sticky_using_subcommand export" -l format -d 'What to write: `bundle` (for `sticky import`), `markdown` (a document a reviewer reads: each turn\'s prompt, answer, agent, model, time and cost, and the rotations and carries between sessions) or `json` (the same, as one JSON document). Markdown and JSON need no agent files, go to a terminal too, and have secrets replaced by `[redacted]`' -r -f -a "bundle\t'The conversation and its agent session\'s files, for `sticky import`'
markdown\t'A document to read'
json\t'The document as JSON'"
complete -c sticky -n "__fish_sticky_using_subcommand export" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand export" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand export" -l force -d 'Overwrite FILE even when it is not a sticky bundle (or is a link, which is replaced)'
complete -c sticky -n "__fish_sticky_using_subcommand export" -l no-redact -d 'Keep what looks like a secret (API keys, tokens, passwords, the values of environment variables named like secrets) in a markdown or JSON export'
complete -c sticky -n "__fish_sticky_using_subcommand export" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand export" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand import" -l as -d 'Add the conversation as thread NAME instead of the name it had' -r
complete -c sticky -n "__fish_sticky_using_subcommand import" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand import" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand import" -l replace -d 'Replace a thread of the same name in this project: its sessions, turns and vault copies are removed (asked first when stdin is a terminal). The agent\'s files of the bundle\'s session are placed over only where they hold nothing the bundle lacks, and a session another project of this HOME resumes is never taken'
complete -c sticky -n "__fish_sticky_using_subcommand import" -s y -l yes -d 'Answer yes to what import asks: replacing a thread (--replace), and placing a bundle whose manifest and files add up to more than 256 MiB, or more than 8 MiB and 200 times the bundle\'s size (what no real session comes near; refused without --yes when there is no terminal to ask on)'
complete -c sticky -n "__fish_sticky_using_subcommand import" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand import" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand relocate" -l from -d 'Carry only the sessions recorded for DIR, the directory this project moved from: needed when a database several directories use (one `STICKY_DB`) holds sessions of more than one directory that is gone' -r -F
complete -c sticky -n "__fish_sticky_using_subcommand relocate" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand relocate" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand relocate" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand relocate" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand relocate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand forget" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand forget" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand forget" -s y -l yes -d 'Delete without asking (needed when stdin is not a terminal)'
complete -c sticky -n "__fish_sticky_using_subcommand forget" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand forget" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand forget" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand show" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand show" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand show" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand show" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand trust" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand trust" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand trust" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand trust" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand trust" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand usage" -l by -d 'What each row sums: a day, week or month, a thread, an agent session, a model or an agent' -r -f -a "day\t'A day (UTC)'
week\t'A week, Monday to Sunday'
month\t'A month'
thread\t'A thread (of its project)'
session\t'An agent session'
model\t'A model'
agent\t'An agent'"
complete -c sticky -n "__fish_sticky_using_subcommand usage" -l since -d 'Count only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC) or a duration back from now (`90m`, `2h`, `7d`, `1w`)' -r
complete -c sticky -n "__fish_sticky_using_subcommand usage" -l until -d 'Count only the turns started before WHEN (a date alone counts that day whole)' -r
complete -c sticky -n "__fish_sticky_using_subcommand usage" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand usage" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand usage" -l all -d 'Every project you ran sticky in, not only this one'
complete -c sticky -n "__fish_sticky_using_subcommand usage" -l prune -d 'With --all: drop the projects that are gone from the list'
complete -c sticky -n "__fish_sticky_using_subcommand usage" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand usage" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand usage" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand search" -l since -d 'Only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC) or a duration back from now (`90m`, `2h`, `7d`, `1w`)' -r
complete -c sticky -n "__fish_sticky_using_subcommand search" -s n -l limit -d 'Show at most N turns, the newest' -r
complete -c sticky -n "__fish_sticky_using_subcommand search" -s C -d 'Run as if sticky was started in DIR' -r -f -a "(__fish_complete_directories)"
complete -c sticky -n "__fish_sticky_using_subcommand search" -s t -l thread -d 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch\'s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request\'s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch\'s)' -r
complete -c sticky -n "__fish_sticky_using_subcommand search" -l all -d 'Every project you ran sticky in, not only this one'
complete -c sticky -n "__fish_sticky_using_subcommand search" -l json -d 'Print one JSON object on stdout instead of text'
complete -c sticky -n "__fish_sticky_using_subcommand search" -s q -l quiet -d 'Print nothing on stderr but errors (no progress)'
complete -c sticky -n "__fish_sticky_using_subcommand search" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "new" -d 'Start a fresh session for this conversation, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "fork" -d 'Make thread NAME a fork of this conversation\'s live session, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "status" -d 'Show the project, the conversation, its session and the last turn'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "log" -d 'List the turns of this conversation across all its sessions'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "sessions" -d 'List the sessions of this conversation, with their lineage'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "threads" -d 'List the conversations (threads) of this project'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "init" -d 'Make the current directory (or `-C DIR`) a sticky project of its own'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "agents" -d 'List the agents sticky knows: whether each is installed, its path and its version'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "config" -d 'Show the effective settings and where each came from'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "doctor" -d 'Explain what the next turn would use and why, and what stands in its way'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "prompt" -d 'Print a one-line status for a shell prompt: agent, short session ID, last turn\'s status'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "export" -d 'Write the conversation and its agent session\'s files to one file, for `sticky import` in another directory, HOME or machine'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "import" -d 'Add a conversation written by `sticky export` to this project: the next turn resumes the same agent session, with its whole history'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "relocate" -d 'Carry the conversations forward after the project directory moved or was renamed'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "forget" -d 'Delete this conversation (or `-t THREAD`) for good: its sessions, its turns and the copies of its sessions\' files in sticky\'s vault'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "show" -d 'Print a turn\'s answer again, exactly as it was printed'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "trust" -d 'Adopt this project\'s state as yours: a `.sticky/` (or a database kept elsewhere) you copied, restored or cloned on purpose'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "usage" -d 'Sum the tokens and cost of the turns by day, week, month, thread, session, model or agent'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "search" -d 'Find the turns whose prompt or kept answer holds every word of TEXT'
complete -c sticky -n "__fish_sticky_using_subcommand help; and not __fish_seen_subcommand_from new fork status log sessions threads init agents config doctor prompt export import relocate forget show trust usage search help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
