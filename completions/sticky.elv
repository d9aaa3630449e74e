
use builtin;
use str;

set edit:completion:arg-completer[sticky] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'sticky'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'sticky'= {
            cand -p 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order'
            cand --prompt 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order'
            cand -a 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session'
            cand --agent 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session'
            cand -m 'The model for the session; a different model than the session''s starts a new session'
            cand --model 'The model for the session; a different model than the session''s starts a new session'
            cand --wait 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)'
            cand --carry 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky''s own record: the old session''s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration''s `carry_on_change` makes this the default for a change of model or agent'
            cand --carry-max 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit'
            cand --stdin 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration''s `stdin`, else auto)'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --no-wait 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database''s lock'
            cand --no-carry 'Carry no recap, even where the configuration''s `carry_on_change` would'
            cand --fork 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration''s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand new 'Start a fresh session for this conversation, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)'
            cand fork 'Make thread NAME a fork of this conversation''s live session, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)'
            cand status 'Show the project, the conversation, its session and the last turn'
            cand log 'List the turns of this conversation across all its sessions'
            cand sessions 'List the sessions of this conversation, with their lineage'
            cand threads 'List the conversations (threads) of this project'
            cand init 'Make the current directory (or `-C DIR`) a sticky project of its own'
            cand agents 'List the agents sticky knows: whether each is installed, its path and its version'
            cand config 'Show the effective settings and where each came from'
            cand doctor 'Explain what the next turn would use and why, and what stands in its way'
            cand prompt 'Print a one-line status for a shell prompt: agent, short session ID, last turn''s status'
            cand export 'Write the conversation and its agent session''s files to one file, for `sticky import` in another directory, HOME or machine'
            cand import 'Add a conversation written by `sticky export` to this project: the next turn resumes the same agent session, with its whole history'
            cand relocate 'Carry the conversations forward after the project directory moved or was renamed'
            cand forget 'Delete this conversation (or `-t THREAD`) for good: its sessions, its turns and the copies of its sessions'' files in sticky''s vault'
            cand show 'Print a turn''s answer again, exactly as it was printed'
            cand trust 'Adopt this project''s state as yours: a `.sticky/` (or a database kept elsewhere) you copied, restored or cloned on purpose'
            cand usage 'Sum the tokens and cost of the turns by day, week, month, thread, session, model or agent'
            cand search 'Find the turns whose prompt or kept answer holds every word of TEXT'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'sticky;new'= {
            cand -p 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order'
            cand --prompt 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order'
            cand -a 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session'
            cand --agent 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session'
            cand -m 'The model for the session; a different model than the session''s starts a new session'
            cand --model 'The model for the session; a different model than the session''s starts a new session'
            cand --wait 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)'
            cand --carry 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky''s own record: the old session''s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration''s `carry_on_change` makes this the default for a change of model or agent'
            cand --carry-max 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit'
            cand --stdin 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration''s `stdin`, else auto)'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --no-wait 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database''s lock'
            cand --no-carry 'Carry no recap, even where the configuration''s `carry_on_change` would'
            cand --fork 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration''s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;fork'= {
            cand -p 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order'
            cand --prompt 'The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined with any prompt words in command-line order'
            cand -a 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session'
            cand --agent 'The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in the configuration; a different agent than the session''s starts a new session'
            cand -m 'The model for the session; a different model than the session''s starts a new session'
            cand --model 'The model for the session; a different model than the session''s starts a new session'
            cand --wait 'Wait at most SECONDS for another turn on this conversation to end (exit 75 when it does not)'
            cand --carry 'When this turn starts a new session (`sticky new`, another --model or --agent), put a recap of the old session before the prompt, so the new one knows what was done. KIND `recap` (the default) is sticky''s own record: the old session''s prompts and answers, newest first, naming its agent, model and session ID. `summary` first asks the old session for a handoff summary (one extra turn on it, shown in `log`) and carries that, falling back to `recap` when that turn fails. The configuration''s `carry_on_change` makes this the default for a change of model or agent'
            cand --carry-max 'The most bytes the carried recap may take (at least 512); older turns are left out, then cut, to fit'
            cand --stdin 'What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the configuration''s `stdin`, else auto)'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --no-wait 'Fail at once (exit 75) when another turn is running on this conversation, or another program holds the database''s lock'
            cand --no-carry 'Carry no recap, even where the configuration''s `carry_on_change` would'
            cand --fork 'Make the thread named by -t a fork of the live session of the thread a turn without -t uses (`STICKY_THREAD`, else the configuration''s `thread`, else `main`) before this turn, as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;status'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'sticky;log'= {
            cand -n 'Show only the last N turns'
            cand --limit 'Show only the last N turns'
            cand --since 'Show only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, in UTC as `log` shows times) or a duration back from now (`90m`, `2h`, `3d`, `1w`)'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --answers 'Show each turn''s kept answer under it'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;sessions'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;threads'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --prune 'Forget the threads whose git branch was deleted, or merged into the default branch (and is checked out nowhere), with their sessions, turns and vault copies, as `sticky forget` does. Lists them and asks first when stdin is a terminal; `--yes` confirms without asking, and is needed when stdin is not a terminal. A thread running a turn is left'
            cand -y 'Prune without asking'
            cand --yes 'Prune without asking'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;init'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'sticky;agents'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'sticky;config'= {
            cand -a 'Report as if the turn was run with `--agent NAME`'
            cand --agent 'Report as if the turn was run with `--agent NAME`'
            cand -m 'Report as if the turn was run with `--model MODEL`'
            cand --model 'Report as if the turn was run with `--model MODEL`'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;doctor'= {
            cand -a 'Report as if the turn was run with `--agent NAME`'
            cand --agent 'Report as if the turn was run with `--agent NAME`'
            cand -m 'Report as if the turn was run with `--model MODEL`'
            cand --model 'Report as if the turn was run with `--model MODEL`'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;prompt'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;export'= {
            cand -o 'Write the bundle to FILE (`-` for stdout, the default when stdout is not a terminal). FILE may be a new file, an empty one or an earlier bundle; never a directory nor a path in sticky''s own state (`.sticky/`, the database and its companions)'
            cand --output 'Write the bundle to FILE (`-` for stdout, the default when stdout is not a terminal). FILE may be a new file, an empty one or an earlier bundle; never a directory nor a path in sticky''s own state (`.sticky/`, the database and its companions)'
            cand --format 'What to write: `bundle` (for `sticky import`), `markdown` (a document a reviewer reads: each turn''s prompt, answer, agent, model, time and cost, and the rotations and carries between sessions) or `json` (the same, as one JSON document). Markdown and JSON need no agent files, go to a terminal too, and have secrets replaced by `[redacted]`'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --force 'Overwrite FILE even when it is not a sticky bundle (or is a link, which is replaced)'
            cand --no-redact 'Keep what looks like a secret (API keys, tokens, passwords, the values of environment variables named like secrets) in a markdown or JSON export'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;import'= {
            cand --as 'Add the conversation as thread NAME instead of the name it had'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --replace 'Replace a thread of the same name in this project: its sessions, turns and vault copies are removed (asked first when stdin is a terminal). The agent''s files of the bundle''s session are placed over only where they hold nothing the bundle lacks, and a session another project of this HOME resumes is never taken'
            cand -y 'Answer yes to what import asks: replacing a thread (--replace), and placing a bundle whose manifest and files add up to more than 256 MiB, or more than 8 MiB and 200 times the bundle''s size (what no real session comes near; refused without --yes when there is no terminal to ask on)'
            cand --yes 'Answer yes to what import asks: replacing a thread (--replace), and placing a bundle whose manifest and files add up to more than 256 MiB, or more than 8 MiB and 200 times the bundle''s size (what no real session comes near; refused without --yes when there is no terminal to ask on)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;relocate'= {
            cand --from 'Carry only the sessions recorded for DIR, the directory this project moved from: needed when a database several directories use (one `STICKY_DB`) holds sessions of more than one directory that is gone'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;forget'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand -y 'Delete without asking (needed when stdin is not a terminal)'
            cand --yes 'Delete without asking (needed when stdin is not a terminal)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;show'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;trust'= {
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;usage'= {
            cand --by 'What each row sums: a day, week or month, a thread, an agent session, a model or an agent'
            cand --since 'Count only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC) or a duration back from now (`90m`, `2h`, `7d`, `1w`)'
            cand --until 'Count only the turns started before WHEN (a date alone counts that day whole)'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --all 'Every project you ran sticky in, not only this one'
            cand --prune 'With --all: drop the projects that are gone from the list'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;search'= {
            cand --since 'Only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC) or a duration back from now (`90m`, `2h`, `7d`, `1w`)'
            cand -n 'Show at most N turns, the newest'
            cand --limit 'Show at most N turns, the newest'
            cand -C 'Run as if sticky was started in DIR'
            cand -t 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --thread 'The conversation (thread) of the project to use; created on first use. `@branch` is the current git branch''s thread (`feature/login`; on a detached HEAD, `main`, said on stderr), `@pr` the pull request''s in GitHub Actions (`pr-N`, as the sticky action names it; else the branch''s)'
            cand --all 'Every project you ran sticky in, not only this one'
            cand --json 'Print one JSON object on stdout instead of text'
            cand -q 'Print nothing on stderr but errors (no progress)'
            cand --quiet 'Print nothing on stderr but errors (no progress)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'sticky;help'= {
            cand new 'Start a fresh session for this conversation, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)'
            cand fork 'Make thread NAME a fork of this conversation''s live session, and run its first turn if a prompt is given (as words, with -p, or piped on stdin)'
            cand status 'Show the project, the conversation, its session and the last turn'
            cand log 'List the turns of this conversation across all its sessions'
            cand sessions 'List the sessions of this conversation, with their lineage'
            cand threads 'List the conversations (threads) of this project'
            cand init 'Make the current directory (or `-C DIR`) a sticky project of its own'
            cand agents 'List the agents sticky knows: whether each is installed, its path and its version'
            cand config 'Show the effective settings and where each came from'
            cand doctor 'Explain what the next turn would use and why, and what stands in its way'
            cand prompt 'Print a one-line status for a shell prompt: agent, short session ID, last turn''s status'
            cand export 'Write the conversation and its agent session''s files to one file, for `sticky import` in another directory, HOME or machine'
            cand import 'Add a conversation written by `sticky export` to this project: the next turn resumes the same agent session, with its whole history'
            cand relocate 'Carry the conversations forward after the project directory moved or was renamed'
            cand forget 'Delete this conversation (or `-t THREAD`) for good: its sessions, its turns and the copies of its sessions'' files in sticky''s vault'
            cand show 'Print a turn''s answer again, exactly as it was printed'
            cand trust 'Adopt this project''s state as yours: a `.sticky/` (or a database kept elsewhere) you copied, restored or cloned on purpose'
            cand usage 'Sum the tokens and cost of the turns by day, week, month, thread, session, model or agent'
            cand search 'Find the turns whose prompt or kept answer holds every word of TEXT'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'sticky;help;new'= {
        }
        &'sticky;help;fork'= {
        }
        &'sticky;help;status'= {
        }
        &'sticky;help;log'= {
        }
        &'sticky;help;sessions'= {
        }
        &'sticky;help;threads'= {
        }
        &'sticky;help;init'= {
        }
        &'sticky;help;agents'= {
        }
        &'sticky;help;config'= {
        }
        &'sticky;help;doctor'= {
        }
        &'sticky;help;prompt'= {
        }
        &'sticky;help;export'= {
        }
        &'sticky;help;import'= {
        }
        &'sticky;help;relocate'= {
        }
        &'sticky;help;forget'= {
        }
        &'sticky;help;show'= {
        }
        &'sticky;help;trust'= {
        }
        &'sticky;help;usage'= {
        }
        &'sticky;help;search'= {
        }
        &'sticky;help;help'= {
        }
    ]
    $completions[$command]
}
