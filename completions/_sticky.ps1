
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'sticky' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'sticky'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'sticky' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order')
            [CompletionResult]::new('-a', '-a', [CompletionResultType]::ParameterName, 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model for the session; a different model than the session''s starts a new session')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model for the session; a different model than the session''s starts a new session')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)')
            [CompletionResult]::new('--carry', '--carry', [CompletionResultType]::ParameterName, 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky''s own record: the old session''s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration''s `carry_on_change` makes this the default for a change of model or agent')
            [CompletionResult]::new('--carry-max', '--carry-max', [CompletionResultType]::ParameterName, 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit')
            [CompletionResult]::new('--stdin', '--stdin', [CompletionResultType]::ParameterName, 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration''s `stdin`, else auto)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database''s lock')
            [CompletionResult]::new('--no-carry', '--no-carry', [CompletionResultType]::ParameterName, 'Carry no recap, even where the configuration''s `carry_on_change` would')
            [CompletionResult]::new('--fork', '--fork', [CompletionResultType]::ParameterName, 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration''s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('new', 'new', [CompletionResultType]::ParameterValue, 'Start a fresh session for this conversation, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)')
            [CompletionResult]::new('fork', 'fork', [CompletionResultType]::ParameterValue, 'Make thread NAME a fork of this conversation''s live session, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the project, the conversation, its session and the last turn')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'List the turns of this conversation across all its sessions')
            [CompletionResult]::new('sessions', 'sessions', [CompletionResultType]::ParameterValue, 'List the sessions of this conversation, with their lineage')
            [CompletionResult]::new('threads', 'threads', [CompletionResultType]::ParameterValue, 'List the conversations (threads) of this project')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Make the current directory (or `-C DIR`) a sticky project of its own')
            [CompletionResult]::new('agents', 'agents', [CompletionResultType]::ParameterValue, 'List the agents sticky knows: whether each is installed, its path and its version')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the effective settings and where each came from')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Explain what the next turn would use and why, and what stands in its way')
            [CompletionResult]::new('prompt', 'prompt', [CompletionResultType]::ParameterValue, 'Print a one-line status for a shell prompt: agent, short session ID, last turn''s status')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write the conversation and its agent session''s files to one file, for `sticky import` in another directory, HOME or machine')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Add a conversation written by `sticky export` to this project: the next turn resumes the same agent session, with its whole history')
            [CompletionResult]::new('relocate', 'relocate', [CompletionResultType]::ParameterValue, 'Carry the conversations forward after the project directory moved or was renamed')
            [CompletionResult]::new('forget', 'forget', [CompletionResultType]::ParameterValue, 'Delete this conversation (or `-t THREAD`) for good: its sessions, its turns and the copies of its sessions'' files in sticky''s vault')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a turn''s answer again, exactly as it was printed')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Adopt this project''s state as yours: a `.sticky/` (or a database kept elsewhere) you copied, restored or cloned on purpose')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Sum the tokens and cost of the turns by day, week, month, thread, session, model or agent')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find the turns whose prompt or kept answer holds every word of TEXT')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'sticky;new' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order')
            [CompletionResult]::new('-a', '-a', [CompletionResultType]::ParameterName, 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model for the session; a different model than the session''s starts a new session')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model for the session; a different model than the session''s starts a new session')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)')
            [CompletionResult]::new('--carry', '--carry', [CompletionResultType]::ParameterName, 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky''s own record: the old session''s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration''s `carry_on_change` makes this the default for a change of model or agent')
            [CompletionResult]::new('--carry-max', '--carry-max', [CompletionResultType]::ParameterName, 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit')
            [CompletionResult]::new('--stdin', '--stdin', [CompletionResultType]::ParameterName, 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration''s `stdin`, else auto)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database''s lock')
            [CompletionResult]::new('--no-carry', '--no-carry', [CompletionResultType]::ParameterName, 'Carry no recap, even where the configuration''s `carry_on_change` would')
            [CompletionResult]::new('--fork', '--fork', [CompletionResultType]::ParameterName, 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration''s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;fork' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order')
            [CompletionResult]::new('--prompt', '--prompt', [CompletionResultType]::ParameterName, 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order')
            [CompletionResult]::new('-a', '-a', [CompletionResultType]::ParameterName, 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model for the session; a different model than the session''s starts a new session')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model for the session; a different model than the session''s starts a new session')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)')
            [CompletionResult]::new('--carry', '--carry', [CompletionResultType]::ParameterName, 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky''s own record: the old session''s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration''s `carry_on_change` makes this the default for a change of model or agent')
            [CompletionResult]::new('--carry-max', '--carry-max', [CompletionResultType]::ParameterName, 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit')
            [CompletionResult]::new('--stdin', '--stdin', [CompletionResultType]::ParameterName, 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration''s `stdin`, else auto)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database''s lock')
            [CompletionResult]::new('--no-carry', '--no-carry', [CompletionResultType]::ParameterName, 'Carry no recap, even where the configuration''s `carry_on_change` would')
            [CompletionResult]::new('--fork', '--fork', [CompletionResultType]::ParameterName, 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration''s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;status' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'sticky;log' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Show only the last N turns')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show only the last N turns')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Show only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, in UTC as `log` shows times) or a duration back from now (`90m`, `2h`, `3d`, `1w`)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--answers', '--answers', [CompletionResultType]::ParameterName, 'Show each turn''s kept answer under it')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;sessions' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;threads' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--prune', '--prune', [CompletionResultType]::ParameterName, 'Forget the threads whose git branch was deleted, or merged into the default branch (and is checked out nowhere), with their sessions, turns and vault copies, as `sticky forget` does. Lists them and asks first when stdin is a terminal; `--yes` confirms without asking, and is needed when stdin is not a terminal. A thread running a turn is left')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Prune without asking')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Prune without asking')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;init' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'sticky;agents' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'sticky;config' {
            [CompletionResult]::new('-a', '-a', [CompletionResultType]::ParameterName, 'Report as if the turn was run with `--agent NAME`')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Report as if the turn was run with `--agent NAME`')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'Report as if the turn was run with `--model MODEL`')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Report as if the turn was run with `--model MODEL`')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;doctor' {
            [CompletionResult]::new('-a', '-a', [CompletionResultType]::ParameterName, 'Report as if the turn was run with `--agent NAME`')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Report as if the turn was run with `--agent NAME`')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'Report as if the turn was run with `--model MODEL`')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Report as if the turn was run with `--model MODEL`')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;prompt' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;export' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the bundle to FILE (`-` for stdout, the default when stdout is not a terminal). FILE may be a new file, an empty one or an earlier bundle; never a directory nor a path in sticky''s own state (`.sticky/`, the database and its companions)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the bundle to FILE (`-` for stdout, the default when stdout is not a terminal). FILE may be a new file, an empty one or an earlier bundle; never a directory nor a path in sticky''s own state (`.sticky/`, the database and its companions)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'What to write: `bundle` (for `sticky import`), `markdown` (a document a reviewer reads: each turn''s prompt, answer, agent, model, time and cost, and the rotations and carries between sessions) or `json` (the same, as one JSON document). Markdown and JSON need no agent files, go to a terminal too, and have secrets replaced by `[redacted]`')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Overwrite FILE even when it is not a sticky bundle (or is a link, which is replaced)')
            [CompletionResult]::new('--no-redact', '--no-redact', [CompletionResultType]::ParameterName, 'Keep what looks like a secret (API keys, tokens, passwords, the values of environment variables named like secrets) in a markdown or JSON export')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;import' {
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Add the conversation as thread NAME instead of the name it had')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--replace', '--replace', [CompletionResultType]::ParameterName, 'Replace a thread of the same name in this project: its sessions, turns and vault copies are removed (asked first when stdin is a terminal). The agent''s files of the bundle''s session are placed over only where they hold nothing the bundle lacks, and a session another project of this HOME resumes is never taken')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Answer yes to what import asks: replacing a thread (--replace), and placing a bundle whose manifest and files add up to more than 256 MiB, or more than 8 MiB and 200 times the bundle''s size (what no real session comes near; refused without --yes when there is no terminal to ask on)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Answer yes to what import asks: replacing a thread (--replace), and placing a bundle whose manifest and files add up to more than 256 MiB, or more than 8 MiB and 200 times the bundle''s size (what no real session comes near; refused without --yes when there is no terminal to ask on)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;relocate' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Carry only the sessions recorded for DIR, the directory this project moved from: needed when a database several directories use (one `STICKY_DB`) holds sessions of more than one directory that is gone')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;forget' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Delete without asking (needed when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Delete without asking (needed when stdin is not a terminal)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;show' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;trust' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;usage' {
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'What each row sums: a day, week or month, a thread, an agent session, a model or an agent')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Count only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC) or a duration back from now (`90m`, `2h`, `7d`, `1w`)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Count only the turns started before WHEN (a date alone counts that day whole)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every project you ran sticky in, not only this one')
            [CompletionResult]::new('--prune', '--prune', [CompletionResultType]::ParameterName, 'With --all: drop the projects that are gone from the list')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;search' {
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC) or a duration back from now (`90m`, `2h`, `7d`, `1w`)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Show at most N turns, the newest')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most N turns, the newest')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if sticky was started in DIR')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every project you ran sticky in, not only this one')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of text')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors (no progress)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'sticky;help' {
            [CompletionResult]::new('new', 'new', [CompletionResultType]::ParameterValue, 'Start a fresh session for this conversation, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)')
            [CompletionResult]::new('fork', 'fork', [CompletionResultType]::ParameterValue, 'Make thread NAME a fork of this conversation''s live session, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the project, the conversation, its session and the last turn')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'List the turns of this conversation across all its sessions')
            [CompletionResult]::new('sessions', 'sessions', [CompletionResultType]::ParameterValue, 'List the sessions of this conversation, with their lineage')
            [CompletionResult]::new('threads', 'threads', [CompletionResultType]::ParameterValue, 'List the conversations (threads) of this project')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Make the current directory (or `-C DIR`) a sticky project of its own')
            [CompletionResult]::new('agents', 'agents', [CompletionResultType]::ParameterValue, 'List the agents sticky knows: whether each is installed, its path and its version')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the effective settings and where each came from')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Explain what the next turn would use and why, and what stands in its way')
            [CompletionResult]::new('prompt', 'prompt', [CompletionResultType]::ParameterValue, 'Print a one-line status for a shell prompt: agent, short session ID, last turn''s status')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write the conversation and its agent session''s files to one file, for `sticky import` in another directory, HOME or machine')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Add a conversation written by `sticky export` to this project: the next turn resumes the same agent session, with its whole history')
            [CompletionResult]::new('relocate', 'relocate', [CompletionResultType]::ParameterValue, 'Carry the conversations forward after the project directory moved or was renamed')
            [CompletionResult]::new('forget', 'forget', [CompletionResultType]::ParameterValue, 'Delete this conversation (or `-t THREAD`) for good: its sessions, its turns and the copies of its sessions'' files in sticky''s vault')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a turn''s answer again, exactly as it was printed')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Adopt this project''s state as yours: a `.sticky/` (or a database kept elsewhere) you copied, restored or cloned on purpose')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Sum the tokens and cost of the turns by day, week, month, thread, session, model or agent')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find the turns whose prompt or kept answer holds every word of TEXT')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'sticky;help;new' {
            break
        }
        'sticky;help;fork' {
            break
        }
        'sticky;help;status' {
            break
        }
        'sticky;help;log' {
            break
        }
        'sticky;help;sessions' {
            break
        }
        'sticky;help;threads' {
            break
        }
        'sticky;help;init' {
            break
        }
        'sticky;help;agents' {
            break
        }
        'sticky;help;config' {
            break
        }
        'sticky;help;doctor' {
            break
        }
        'sticky;help;prompt' {
            break
        }
        'sticky;help;export' {
            break
        }
        'sticky;help;import' {
            break
        }
        'sticky;help;relocate' {
            break
        }
        'sticky;help;forget' {
            break
        }
        'sticky;help;show' {
            break
        }
        'sticky;help;trust' {
            break
        }
        'sticky;help;usage' {
            break
        }
        'sticky;help;search' {
            break
        }
        'sticky;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
