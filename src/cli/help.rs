//! The tables of `--help` and the man pages: the exit-code contract, each page's examples
//! and the environment variables sticky reads.

/// The exit-code contract, printed under `--help` and in the man page.
pub const EXIT_CODES: &str = "\
Exit codes:
  0        the turn succeeded
  1-125    the agent's own exit code, passed through (but see 76)
  128+N    the agent was killed by signal N (130 for Ctrl-C)
  2        usage error: bad option or argument (a bundle sticky cannot import, too)
  70       internal error in sticky
  71       store error: the project database cannot be opened, read or written, or is not yours
  72       agent not found or not executable
  73       session lost: the agent cannot resume the stored session, or it is another directory's
  74       amnesia detected: the agent answered from a different session than the one resumed
  75       busy: another turn holds this conversation and waiting gave up
  76       the agent exited with a code sticky reserves (2, 70-76); log and --json show it";

/// The EXAMPLES of the man pages: per page (`sticky`, or a command's name), each command line
/// with what it does. Every one is run against the fake agents by the integration tests
/// (`tests/it/documented.rs`), so they are written to run as they stand.
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "sticky",
        &[
            (
                "sticky \"why does the build fail?\"",
                "one headless turn on the project's session; the answer goes to stdout",
            ),
            (
                "sticky \"apply the fix\" -- --permission-mode acceptEdits",
                "the prompt comes first; what follows -- goes to the agent unchanged",
            ),
            (
                "sticky -p \"-v prints nothing; why?\"",
                "a prompt that starts with -",
            ),
            (
                "git diff | sticky \"review this\"",
                "piped input is added to the prompt as context",
            ),
            (
                "sticky -t review \"look at the API\"",
                "a turn on another conversation of the project",
            ),
            (
                "sticky -t @branch \"plan the login form\"",
                "a turn on the current git branch's conversation",
            ),
            (
                "sticky --json \"summarise the diff\" | jq -r .answer",
                "one JSON object on stdout, for scripts",
            ),
            (
                "sticky -a codex --carry \"what did we decide?\"",
                "go on with another agent, whose new session starts with a recap of this one",
            ),
        ],
    ),
    (
        "fork",
        &[
            (
                "sticky fork idea \"try it with a trie instead\"",
                "thread idea goes on from this conversation's history; main never sees its turns",
            ),
            (
                "sticky -t idea2 --fork \"or with a hash map\"",
                "the same in one step, from thread main",
            ),
        ],
    ),
    (
        "new",
        &[
            ("sticky new", "start a fresh session; the next turn runs it"),
            (
                "sticky new \"start on the release notes\"",
                "start a fresh session with this first prompt",
            ),
            (
                "echo \"start on the changelog\" | sticky new",
                "piped input is the first prompt of the new session",
            ),
            (
                "sticky -a codex new \"port the parser\"",
                "a fresh session with another agent",
            ),
            (
                "sticky new --carry \"go on from here\"",
                "a fresh session that starts with a recap of the old one",
            ),
        ],
    ),
    (
        "status",
        &[(
            "sticky status",
            "the project, thread, session and last turn",
        )],
    ),
    (
        "log",
        &[
            ("sticky log | head", "the first turns of the conversation"),
            (
                "sticky log -n 5 --answers",
                "the last five turns, with their answers",
            ),
        ],
    ),
    (
        "sessions",
        &[("sticky sessions --json", "the sessions, as JSON")],
    ),
    (
        "threads",
        &[
            ("sticky threads", "the conversations of the project"),
            (
                "sticky threads --prune",
                "forget the threads of deleted and merged branches, after asking",
            ),
        ],
    ),
    (
        "init",
        &[(
            "sticky init",
            "make the current directory a project of its own",
        )],
    ),
    (
        "agents",
        &[("sticky agents", "the agents, their programs and versions")],
    ),
    (
        "config",
        &[("sticky config", "each setting and where it came from")],
    ),
    (
        "doctor",
        &[
            (
                "sticky doctor",
                "what the next turn would use, and what stands in its way",
            ),
            ("sticky doctor -a codex", "the same, for a turn with Codex"),
        ],
    ),
    (
        "prompt",
        &[("sticky prompt", "one line for a shell prompt")],
    ),
    (
        "export",
        &[
            (
                "sticky export -o conversation.sticky",
                "the conversation and its session's files in one file",
            ),
            (
                "sticky export | ssh host sticky import --as from-laptop -",
                "through a pipe, to another machine (or HOME: one agent session runs in one \
                 project of a HOME; the other way, ssh host sticky export | sticky import -)",
            ),
            (
                "sticky export --format markdown -o review.md",
                "the conversation as a document to read: prompts, answers, models, costs and \
                 rotations, secrets redacted",
            ),
        ],
    ),
    (
        "import",
        &[
            (
                "sticky import conversation.sticky",
                "add it here; the next turn resumes the same session with its history",
            ),
            (
                "sticky import --as review conversation.sticky",
                "add it under another thread name",
            ),
        ],
    ),
    (
        "relocate",
        &[(
            "sticky relocate",
            "go on with the conversations after the project directory moved",
        )],
    ),
    (
        "forget",
        &[(
            "sticky forget -t scratch --yes",
            "delete the conversation `scratch`, its turns and its vault copies, without asking",
        )],
    ),
    (
        "show",
        &[
            ("sticky show", "the last turn's answer, again"),
            (
                "sticky show --json",
                "the last turn and its answer, as JSON",
            ),
        ],
    ),
    (
        "usage",
        &[
            (
                "sticky usage",
                "tokens and cost of this project, day by day",
            ),
            (
                "sticky usage --by model --since 7d",
                "the last seven days, by model",
            ),
            (
                "sticky usage --all --by month --json",
                "every project you ran sticky in, month by month, as JSON",
            ),
        ],
    ),
    (
        "search",
        &[
            (
                "sticky search migration",
                "the turns of this project that mention a migration",
            ),
            (
                "sticky search --all --since 30d \"rate limit\"",
                "the last month's turns of every project that hold both words",
            ),
        ],
    ),
    (
        "trust",
        &[(
            "sticky trust",
            "continue here a state you copied or restored yourself (a CI cache, a backup)",
        )],
    ),
];

/// The environment variables sticky reads, for the man pages (name, meaning).
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "STICKY_AGENT",
        "the agent to use, as --agent does (a flag wins over it); a session it rotates is named \
         on stderr",
    ),
    (
        "STICKY_MODEL",
        "the model to use, as --model does (a flag wins over it); a session it rotates is named \
         on stderr",
    ),
    (
        "STICKY_THREAD",
        "the conversation to use, as --thread does (a flag wins over it); @branch follows the \
         git branch, @pr the pull request in GitHub Actions",
    ),
    (
        "STICKY_DB",
        "the database file, instead of .sticky/sticky.db in the project directory \
         (read-only checkouts, CI caches); a relative path is taken from the project directory",
    ),
    (
        "STICKY_CEILING_DIRECTORIES",
        "directories (colon-separated, as git's GIT_CEILING_DIRECTORIES) the search for a \
         project's .sticky/ never enters from below (their own serves turns run there); nor \
         does it enter the home directory, /, or a directory owned by another user",
    ),
    (
        "STICKY_CONFIG",
        "the configuration file, instead of sticky/config.toml in the user's configuration \
         directory; an absolute path to a file that must exist (exit 2 otherwise)",
    ),
    (
        "STICKY_STDIN",
        "what a turn does with stdin that is not a terminal, as --stdin does: auto, wait or \
         skip (a flag wins over it)",
    ),
    (
        "STICKY_<AGENT>_BIN",
        "the program of an agent (STICKY_CLAUDE_BIN; non-alphanumeric characters of the name \
         become _), before the configuration's bin and before PATH",
    ),
    (
        "STICKY_ACTIVE",
        "set to 1 for the agent, so a sticky run by the agent can tell it runs inside one",
    ),
    (
        "PAGER",
        "the pager of long listings (log, sessions, threads) when stdout is a terminal; \
         default less -FRX; PAGER=cat turns paging off",
    ),
    ("NO_COLOR", "when set, sticky prints no colour"),
];
