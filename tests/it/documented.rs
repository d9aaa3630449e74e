//! Every command the documentation shows runs as written.
//!
//! At test time, [`documented`] reads README.md, docs/*.md and the EXAMPLES of man/*.1 and
//! extracts every command line that invokes `sticky`: shell lines of fenced blocks (console
//! blocks' `$ ` lines, GitHub Actions' `- run:` lines, a TOML `command = "..."`), and inline code
//! spans of the prose. Comments after `#` are dropped; pipelines, redirects and `$(...)` stay.
//! Each line then runs, as it stands, under `sh -c` (or bash where the row says so) in a fresh
//! [`TestEnv`] project that has one earlier turn, with the built sticky and the fake agents on
//! PATH, and the fake's record of the run is checked against the line's row in [`rows`]: the
//! prompt and the agent arguments it received, whether it resumed the session, the exit code
//! and what reached stdout. A documented command without a row fails the test (so a new
//! example must be made to run), and so does a row no document shows any more.
//!
//! Stand-ins: `ssh HOST COMMAND` runs COMMAND in the host's project, in a HOME of its own (an
//! agent session runs in one project of a HOME), which has a turn of its own (an agent session
//! is live in one thread of a project only, so the project's own conversation would not import
//! again). `cargo` is a script on PATH (`cargo install` and `cargo binstall` are not run here;
//! `.ci/run` runs the README's install command for real, and `install` serves the release they
//! download), which records its arguments and, as `cargo clippy`,
//! prints two warnings on stderr; the rows assert both. `git diff` and `jq` are the real ones,
//! on a file the set-up commits and then changes. The bare `sticky` (the agent's own UI) runs on
//! a test terminal and leaves the fake's UI with `/exit`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::support::{AgentRun, DEADLINE, TestEnv, python};

/// One documented command line, and where it was first found.
#[derive(Debug, Clone)]
struct Documented {
    text: String,
    source: String,
}

/// The repository's root, where the documents are read from at test time.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every documented sticky command line, each once (in the order first found).
fn documented() -> Vec<Documented> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = read_dir(&root().join("docs"), "md");
    docs.sort();
    files.extend(docs);
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a document");
        found.extend(markdown_commands(&text, &relative(file)));
    }
    let mut pages = read_dir(&root().join("man"), "1");
    pages.sort();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("read a man page");
        found.extend(man_examples(&text, &relative(page)));
    }
    let mut seen = std::collections::BTreeSet::new();
    found.retain(|doc: &Documented| seen.insert(doc.text.clone()));
    found
}

fn read_dir(dir: &Path, ext: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("list a documentation directory")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == ext))
        .collect()
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The sticky command lines of a Markdown document: in fenced blocks, line by line; in the
/// prose, its inline code spans (which may wrap across lines).
fn markdown_commands(text: &str, file: &str) -> Vec<Documented> {
    let mut found = Vec::new();
    let mut fence: Option<String> = None;
    let mut paragraph = String::new();
    let mut paragraph_line = 0;
    for (index, line) in text.lines().enumerate() {
        let source = format!("{file}:{}", index + 1);
        if let Some(rest) = line.trim_start().strip_prefix("```") {
            if fence.take().is_none() {
                fence = Some(rest.trim().to_owned());
            }
            found.extend(spans(&paragraph, &format!("{file}:{paragraph_line}")));
            paragraph.clear();
            continue;
        }
        if let Some(lang) = &fence {
            if let Some(command) = block_line(lang, line).filter(|c| invokes_sticky(c)) {
                found.push(Documented {
                    text: command,
                    source,
                });
            }
        } else if line.trim().is_empty() {
            found.extend(spans(&paragraph, &format!("{file}:{paragraph_line}")));
            paragraph.clear();
        } else {
            if paragraph.is_empty() {
                paragraph_line = index + 1;
            }
            paragraph.push_str(line);
            paragraph.push(' ');
        }
    }
    found.extend(spans(&paragraph, &format!("{file}:{paragraph_line}")));
    found
}

/// The inline code spans of a paragraph that invoke sticky.
fn spans(paragraph: &str, source: &str) -> Vec<Documented> {
    paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|span| span.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|span| invokes_sticky(span))
        .map(|text| Documented {
            text,
            source: source.to_owned(),
        })
        .collect()
}

/// The command on one line of a fenced block of `lang`, without its comment.
fn block_line(lang: &str, line: &str) -> Option<String> {
    let line = line.trim();
    let command = match lang {
        "console" => line.strip_prefix("$ ")?,
        "yaml" | "yml" => line
            .strip_prefix("- run:")
            .or_else(|| line.strip_prefix("run:"))?,
        "toml" => {
            // `command = "sticky prompt"`: the quoted value is the command.
            let (_, value) = line.split_once('=')?;
            let value = value.trim();
            return Some(value.strip_prefix('"')?.split('"').next()?.to_owned());
        }
        _ => line,
    };
    let command = strip_comment(command.trim()).trim_end().to_owned();
    (!command.is_empty()).then_some(command)
}

/// A shell line without its comment: a `#` outside quotes at the start of a word.
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double, mut previous) = (false, false, ' ');
    for (at, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && previous.is_whitespace() => return &line[..at],
            _ => {}
        }
        previous = c;
    }
    line
}

/// Whether `text` runs sticky: the word `sticky` as a command, not a path or a file name
/// (`tools/sticky`, `.sticky/`, `sticky.db`, `sticky-${{ ... }}`).
fn invokes_sticky(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices("sticky").any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + "sticky".len()).copied();
        let starts = before.is_none_or(|b| b" \t|&;('\"`".contains(&b));
        let ends = after.is_none_or(|b| b" \t'\"`);".contains(&b));
        starts && ends
    })
}

/// The command lines of a man page's EXAMPLES section (`.TP`, then the command in bold).
fn man_examples(page: &str, file: &str) -> Vec<Documented> {
    let mut found = Vec::new();
    let mut in_examples = false;
    let mut lines = page.lines().enumerate().peekable();
    while let Some((_, line)) = lines.next() {
        if line.starts_with(".SH") {
            in_examples = line.trim() == ".SH EXAMPLES";
        } else if in_examples && line.trim() == ".TP" {
            if let Some((index, command)) = lines.next() {
                found.push(Documented {
                    text: unroff(command),
                    source: format!("{file}:{}", index + 1),
                });
            }
        }
    }
    found
}

/// Roff text as a terminal shows it: fonts dropped, escapes resolved.
fn unroff(text: &str) -> String {
    text.replace("\\fB", "")
        .replace("\\fR", "")
        .replace("\\fI", "")
        .replace("\\-", "-")
        .replace("\\*(Aq", "'")
        .replace("\\(aq", "'")
        .replace("\\&", "")
        .replace("\\e", "\\")
        .replace("\\\\", "\\")
}

/// How a documented line is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// `sh -c LINE`.
    Sh,
    /// `bash -c LINE` (bash's own expansions, such as `${PS1@P}`).
    Bash,
    /// sticky on a test terminal (the agent's own UI); the line is exactly `sticky`.
    Terminal,
}

/// What running one documented line must do.
#[derive(Debug, Clone)]
struct Row {
    text: &'static str,
    how: How,
    /// Shell text run after the line (on its own line), to use what it defined.
    then: &'static str,
    /// sticky runs before the line, to set up what it shows.
    before: Vec<Vec<&'static str>>,
    code: i32,
    /// The agent (`claude`, `codex`) and the prompt it must receive; `None`: no agent runs.
    turn: Option<Turn>,
    /// What stdout must contain.
    stdout: Vec<&'static str>,
    /// What stderr must contain.
    stderr: Vec<&'static str>,
    /// What the `cargo` stand-in must have been asked (its arguments joined by spaces).
    cargo: Option<&'static str>,
    /// A file the line writes in the project, and what it must contain.
    file: Option<(&'static str, &'static str)>,
    /// docs/agents.md's user-defined agent (`my-agent`) is configured.
    my_agent: bool,
}

/// The turn a documented line runs.
#[derive(Debug, Clone)]
struct Turn {
    agent: &'static str,
    prompt: Prompt,
    /// Agent arguments the fake must receive, in this order, together.
    args: Vec<&'static str>,
    /// Whether the earlier session is resumed (`false`: a new one starts).
    resumed: bool,
    model: Option<&'static str>,
    interactive: bool,
}

#[derive(Debug, Clone)]
enum Prompt {
    Exact(String),
    StartsWith(String),
}

impl Row {
    /// A line that runs no agent and exits 0.
    fn report(text: &'static str) -> Self {
        Self {
            text,
            how: How::Sh,
            then: "",
            before: Vec::new(),
            code: 0,
            turn: None,
            stdout: Vec::new(),
            stderr: Vec::new(),
            cargo: None,
            file: None,
            my_agent: false,
        }
    }

    /// A line that runs one headless turn of Claude on the project's session with `prompt`.
    fn turn(text: &'static str, prompt: &str) -> Self {
        let mut row = Self::report(text);
        row.turn = Some(Turn {
            agent: "claude",
            prompt: Prompt::Exact(prompt.to_owned()),
            args: Vec::new(),
            resumed: true,
            model: None,
            interactive: false,
        });
        row
    }

    fn edit_turn(mut self, edit: impl FnOnce(&mut Turn)) -> Self {
        edit(self.turn.as_mut().expect("a turn row"));
        self
    }

    fn args(self, args: &[&'static str]) -> Self {
        self.edit_turn(|turn| turn.args = args.to_vec())
    }

    fn fresh(self) -> Self {
        self.edit_turn(|turn| turn.resumed = false)
    }

    fn agent(self, agent: &'static str) -> Self {
        self.edit_turn(|turn| turn.agent = agent)
    }

    fn starts_with(self, prefix: &str) -> Self {
        self.edit_turn(|turn| turn.prompt = Prompt::StartsWith(prefix.to_owned()))
    }

    fn stdout(mut self, needle: &'static str) -> Self {
        self.stdout.push(needle);
        self
    }

    fn stderr(mut self, needle: &'static str) -> Self {
        self.stderr.push(needle);
        self
    }
}

/// The expectation of every documented command, keyed by its text as the documents show it.
#[allow(clippy::too_many_lines)] // one row per documented command: a table, not logic
fn rows() -> Vec<Row> {
    let answer = "you said: ";
    let mut rows =
        vec![
        // README: the install line (cargo is the stand-in; sticky --help runs for real).
        Row {
            cargo: Some("install --locked --path ."),
            ..Row::report("cargo install --locked --path . && sticky --help")
        }
        .stdout("Usage: sticky"),
        // README: Install: cargo-binstall (cargo is the stand-in; what it downloads is held to
        // the release by install::the_release_install_sh_the_readme_and_binstall_name_the_same_assets).
        Row {
            cargo: Some("binstall sticky"),
            ..Row::report("cargo binstall sticky")
        },
        // README: Use.
        Row::turn(
            "sticky \"why does the build fail?\"",
            "why does the build fail?",
        )
        .stdout(answer),
        Row::turn("sticky \"fix it\"", "fix it"),
        Row {
            how: How::Terminal,
            ..Row::turn("sticky", "").edit_turn(|turn| turn.interactive = true)
        },
        Row::turn("sticky fork idea \"try a trie instead\"", "try a trie instead")
            .args(&["--fork-session"]),
        Row::turn(
            "sticky fork idea \"try it with a trie instead\"",
            "try it with a trie instead",
        )
        .args(&["--fork-session"]),
        // README and docs/conversations.md: forks.
        Row::report("sticky fork idea").stderr("its first turn makes the fork"),
        Row::turn(
            "sticky -t idea --fork \"try a trie instead\"",
            "try a trie instead",
        )
        .args(&["--fork-session"]),
        Row::turn(
            "sticky -t idea2 --fork \"or with a hash map\"",
            "or with a hash map",
        )
        .args(&["--fork-session"]),
        Row::turn(
            "sticky new \"start on the release notes\"",
            "start on the release notes",
        )
        .fresh(),
        Row::turn("sticky -m claude-opus-4-5 \"try harder\"", "try harder")
            .fresh()
            .edit_turn(|turn| turn.model = Some("claude-opus-4-5")),
        Row::report("sticky status").stdout("earlier work"),
        Row::report("sticky log").stdout("earlier work"),
        Row::turn("git diff | sticky \"review this\"", "")
            .starts_with("review this\n\ndiff --git a/notes.txt b/notes.txt"),
        Row::turn(
            "sticky \"explain the error\" < build.log",
            "explain the error\n\nerror: linking failed\n",
        ),
        Row::turn(
            "echo \"start on the changelog\" | sticky new",
            "start on the changelog\n",
        )
        .fresh(),
        // README: a `while read` loop keeps its list from the turns (one changed file here).
        Row::turn(
            "git diff --name-only | while read -r f; do sticky \"review $f\" </dev/null; done",
            "review notes.txt",
        ),
        Row::turn(
            "sticky \"apply the fix\" -- --permission-mode acceptEdits",
            "apply the fix",
        )
        .args(&["--permission-mode", "acceptEdits"]),
        Row::turn("sticky -p \"-v prints nothing; why?\"", "-v prints nothing; why?"),
        // README: threads that follow git (the project is on branch feature/login).
        Row::turn(
            "sticky -t @branch \"plan the login form\"",
            "plan the login form",
        )
        .fresh(),
        Row {
            before: vec![vec!["-t", "@branch", "plan the login form"]],
            ..Row::report("sticky threads")
        }
        .stdout("feature/login"),
        // No thread's branch is gone here: it asks nothing.
        Row::report("sticky threads --prune").stderr("nothing to prune"),
        // README: from an alias, a script.
        Row {
            then: "ask \"is it done?\"",
            ..Row::turn("alias ask='sticky --quiet'", "is it done?")
        },
        Row::turn(
            "if answer=$(sticky \"does the migration handle NULLs?\"); then echo \"$answer\"; fi",
            "does the migration handle NULLs?",
        )
        .stdout("you said: does the migration handle NULLs?"),
        Row::turn(
            "sticky --json \"summarise the diff\" | jq -r .answer",
            "summarise the diff",
        )
        .stdout("FAKE-CLAUDE turn=2")
        .stdout("you said: summarise the diff"),
        // README: the GitHub Actions steps.
        Row::turn(
            "sticky \"fix the lint errors\" -- --permission-mode acceptEdits",
            "fix the lint errors",
        )
        .args(&["--permission-mode", "acceptEdits"]),
        Row {
            cargo: Some("clippy -- -D warnings"),
            ..Row::turn(
                "cargo clippy -- -D warnings 2>&1 | sticky \"these remain, fix them too\" -- \
                 --permission-mode acceptEdits",
                "these remain, fix them too\n\nwarning: unused variable: `x`\n\
                 warning: `demo` (lib) generated 1 warning\n",
            )
            .args(&["--permission-mode", "acceptEdits"])
        },
        Row {
            file: Some(("msg.txt", "you said: write a commit message for what you changed")),
            ..Row::turn(
                "sticky \"write a commit message for what you changed\" > msg.txt",
                "write a commit message for what you changed",
            )
        },
        // README and docs/prompt.md: shell prompts (bash expands PS1 as it would show it).
        Row {
            how: How::Bash,
            then: "printf '%s' \"${PS1@P}\"",
            ..Row::report(
                "PS1='\\w$(s=$(sticky prompt 2>/dev/null); [ -n \"$s\" ] && printf \" (%s)\" \
                 \"$s\")\\$ '",
            )
        }
        .stdout(" (claude ")
        .stdout(" ok)"),
        Row {
            then: "printf '[%s]' \"$line\"",
            ..Row::report("line=$(sticky prompt 2>/dev/null)")
        }
        .stdout("[claude "),
        // README: prose.
        Row::turn("sticky \"fix the failing test\"", "fix the failing test"),
        Row::turn(
            "sticky \"now do the same for utils.rs\"",
            "now do the same for utils.rs",
        ),
        Row::report("sticky new").stderr("new claude session for thread main"),
        // README: what the command line refuses, and options before or after a command.
        Row {
            code: 2,
            ..Row::report("sticky statsu")
        }
        .stderr("did you mean `sticky status`?"),
        Row::turn("sticky -p statsu", "statsu"),
        Row::report("sticky -a codex new").stderr("new codex session"),
        Row::report("sticky new -a codex").stderr("new codex session"),
        Row::turn("sticky \"explain the error\"", "explain the error"),
        Row::report("sticky init").stderr("is a project of its own"),
        Row::report("sticky prompt").stdout("claude ").stdout(" ok\n"),
        Row::report("sticky sessions").stdout("claude"),
        Row::report("sticky config").stdout("claude"),
        Row::report("sticky doctor").stdout("resume"),
        Row::report("sticky log | head").stdout("earlier work"),
        Row::report("sticky agents").stdout("claude"),
        Row::turn(
            "sticky \"fix the tests\" -- --permission-mode acceptEdits",
            "fix the tests",
        )
        .args(&["--permission-mode", "acceptEdits"]),
        Row::turn(
            "sticky -a codex \"fix the tests\" -- --skip-git-repo-check --full-auto",
            "fix the tests",
        )
        .agent("codex")
        .fresh()
        .args(&["--skip-git-repo-check", "--full-auto"]),
        Row {
            my_agent: true,
            turn: None,
            ..Row::report("sticky -a my-agent \"hello\"")
        }
        .stdout("MY-AGENT session=")
        .stdout("saw=[] you said: hello"),
        // docs/json.md and docs/prompt.md.
        Row::turn("sticky --json PROMPT", "PROMPT").stdout("\"answer\":"),
        Row {
            before: vec![vec!["-t", "review", "look at this"]],
            ..Row::report("sticky -t review prompt")
        }
        .stdout("review:claude "),
        Row::report("sticky prompt --json").stdout("\"agent\":\"claude\""),
        // The man pages' EXAMPLES.
        Row::turn("sticky -t review \"look at the API\"", "look at the API").fresh(),
        Row::turn("sticky -a codex new \"port the parser\"", "port the parser")
            .agent("codex")
            .fresh(),
        Row::report("sticky sessions --json").stdout("\"sessions\":"),
        Row::report("sticky doctor -a codex").stdout("codex"),
        // README and man pages: export, import, relocate (issue 13). In this project the
        // bundle's session is the project's own, so importing it again only adds a thread.
        Row::report("sticky export -o conversation.sticky").stderr("exported thread main"),
        Row {
            before: vec![vec!["export", "-o", "conversation.sticky"]],
            code: 2,
            ..Row::report("sticky import conversation.sticky")
        }
        .stderr("thread named main already"),
        // A bundle of a conversation from elsewhere: one whose session this project does not
        // resume (its own session is live in one thread only).
        Row {
            before: vec![
                vec!["-t", "elsewhere", "a conversation from elsewhere"],
                vec!["-t", "elsewhere", "export", "-o", "conversation.sticky"],
                vec!["-t", "elsewhere", "forget", "--yes"],
            ],
            ..Row::report("sticky import --as review conversation.sticky")
        }
        .stderr("imported thread review"),
        Row::report("sticky export | ssh host sticky import --as from-laptop -")
            .stderr("imported thread from-laptop"),
        // README: the GitHub Action: a run's bundle of thread pr-7 imported, and its log read.
        Row {
            before: vec![
                vec!["-t", "pr-7", "a review turn"],
                vec!["-t", "pr-7", "export", "-o", "conversation.sticky"],
            ],
            ..Row::report("sticky import --replace conversation.sticky")
        }
        .stderr("imported thread pr-7"),
        Row {
            before: vec![vec!["-t", "pr-7", "a review turn"]],
            ..Row::report("sticky log -t pr-7")
        }
        .stdout("a review turn"),
        Row::report("ssh host sticky export | sticky import --as from-host -")
            .stderr("imported thread from-host"),
        // Issue 27 point 5: the conversation as a document (README, docs/conversations.md
        // and the export man page).
        Row::report("sticky export --format markdown -o review.md")
            .stderr("bytes of markdown) to review.md"),
        Row {
            before: vec![vec!["-t", "pr-7", "a review turn"]],
            ..Row::report("sticky -t pr-7 export --format json -o pr-7.json")
        }
        .stderr("bytes of json) to pr-7.json"),
        Row::report("sticky export --format markdown").stdout("> earlier work"),
        Row::report("sticky relocate").stderr("nothing to relocate"),
        // README: the vault (and the forget man page).
        Row {
            before: vec![vec!["-t", "scratch", "throwaway"]],
            ..Row::report("sticky forget -t scratch --yes")
        }
        .stdout("forgot thread scratch: 1 session, 1 turn and 1 vault copy"),
        // Issue 14: answers kept, the ledger, --carry (README and the man pages).
        Row::report("sticky show").stdout("you said: earlier work"),
        Row::report("sticky show 1").stdout("you said: earlier work"),
        Row::report("sticky show --json")
            .stdout("\"answer\":\"FAKE-CLAUDE")
            .stdout("\"prompt\":\"earlier work\""),
        Row::report("sticky log -n 5 --answers").stdout("│ FAKE-CLAUDE"),
        Row::report("sticky log --since 2h").stdout("earlier work"),
        Row::turn("sticky new --carry \"go on from here\"", "")
            .fresh()
            .starts_with(RECAP),
        Row::turn("sticky -a codex --carry \"what did we decide?\"", "")
            .agent("codex")
            .fresh()
            .starts_with(RECAP),
        // README: where state lives (and the trust man page): the project's own state.
        Row::report("sticky trust").stderr("is already yours"),
        // Issue 27: usage reports (README and the usage man page).
        Row::report("sticky usage").stdout("day ").stdout("$0.0042"),
        Row::report("sticky usage --all").stdout("$0.0042"),
        Row {
            before: vec![vec!["a rate limit question"]],
            ..Row::report("sticky search \"rate limit\"")
        }
        .stdout("**rate** **limit**"),
        Row {
            before: vec![vec!["a migration question"]],
            ..Row::report("sticky search migration")
        }
        .stdout("**migration**"),
        Row {
            before: vec![vec!["hit the rate limit"]],
            ..Row::report("sticky search --all --since 30d \"rate limit\"")
        }
        .stdout("**rate** **limit**"),
        Row::report("sticky usage --by model --since 7d").stdout("(default)"),
        Row::report("sticky usage --all --by month --json").stdout("\"by\":\"month\""),
    ];
    for row in &mut rows {
        let claude = row.turn.as_ref().is_some_and(|turn| turn.agent == "claude");
        if claude && row.stdout.is_empty() && row.file.is_none() && row.how != How::Terminal {
            row.stdout.push(answer);
        }
    }
    rows
}

/// How a carried recap starts (`--carry`), naming the old session.
const RECAP: &str = "[sticky: this conversation continues from an earlier claude session ";

/// The `cargo` stand-in: records its arguments, and as `cargo clippy` prints what clippy
/// prints about a warning, on stderr.
const CARGO: &str = r#"#!/bin/sh
echo "$*" >> "$CARGO_STAND_IN_LOG"
case "$1" in
  clippy)
    echo 'warning: unused variable: `x`' >&2
    echo 'warning: `demo` (lib) generated 1 warning' >&2 ;;
  install) echo '  Installed package `sticky` (stand-in)' ;;
esac
"#;

/// A project with one earlier turn, a committed file changed since (for `git diff`), a build
/// log, and a `bin` directory holding the built sticky and the `cargo` stand-in.
fn project() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    std::fs::write(env.project.join("notes.txt"), "one\n").expect("write a file");
    env.git(&env.project, &["add", "notes.txt"]);
    env.git(
        &env.project,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "notes",
        ],
    );
    // A branch of its own, for `-t @branch`.
    env.git(&env.project, &["checkout", "-q", "-b", "feature/login"]);
    std::fs::write(env.project.join("notes.txt"), "one\ntwo\n").expect("change the file");
    std::fs::write(env.project.join("build.log"), "error: linking failed\n").expect("a log");
    env.ok(["earlier work"]);
    let bin = env.scratch.join("doc-bin");
    std::fs::create_dir_all(&bin).expect("create the bin directory");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_sticky"), bin.join("sticky"))
        .expect("link sticky");
    env.script("doc-bin/cargo", CARGO);
    // `ssh HOST COMMAND...` runs the command in the host's project and HOME (see `host`).
    let home = host_home(&env);
    env.script(
        "doc-bin/ssh",
        &format!(
            "#!/bin/sh\nshift\nexport HOME='{home}' XDG_CONFIG_HOME='{home}/.config' \
             XDG_DATA_HOME='{home}/.local/share' XDG_STATE_HOME='{home}/.local/state' \
             XDG_CACHE_HOME='{home}/.cache'\ncd '{}' && exec \"$@\"\n",
            env.root().join("host").display(),
            home = home.display(),
        ),
    );
    (env, bin)
}

/// The host's project of the `ssh` stand-in, with a turn of its own: made only for the lines
/// that reach it, since a turn costs every row's set-up.
fn host(env: &TestEnv) {
    let host = env.root().join("host");
    std::fs::create_dir_all(&host).expect("create the host's project");
    env.git(&host, &["init", "-q"]);
    let home = host_home(env);
    std::fs::create_dir_all(&home).expect("create the host's HOME");
    env.sticky(["on the host"])
        .current_dir(&host)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .run()
        .assert_success();
}

/// The HOME of the `ssh` stand-in's host: another machine's.
fn host_home(env: &TestEnv) -> PathBuf {
    env.root().join("host-home")
}

/// What one documented line did.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `row`'s line in `env` as a shell would (stdin from /dev/null, a deadline).
fn run_line(env: &TestEnv, bin: &Path, row: &Row, extra: &[(String, PathBuf)]) -> Ran {
    let base = env.sticky(Vec::<&str>::new()).command();
    let shell = if row.how == How::Bash { "bash" } else { "sh" };
    let mut script = row.text.to_owned();
    if !row.then.is_empty() {
        script.push('\n');
        script.push_str(row.then);
    }
    let mut command = Command::new(shell);
    command.arg("-c").arg(&script);
    command.current_dir(base.get_current_dir().expect("a directory"));
    for (key, value) in base.get_envs() {
        match value {
            Some(value) if key == "PATH" => {
                let mut path = std::ffi::OsString::from(bin);
                path.push(":");
                path.push(value);
                command.env(key, path)
            }
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.env("CARGO_STAND_IN_LOG", env.scratch.join("cargo.log"));
    for (key, value) in extra {
        command.env(key, value);
    }
    let (out, err) = (env.scratch.join("out"), env.scratch.join("err"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("create a file"))
        .stderr(std::fs::File::create(&err).expect("create a file"))
        .spawn()
        .expect("start the shell");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the shell") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{}`: still running after {DEADLINE:?}", row.text);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Ran {
        code: status.code(),
        stdout: std::fs::read_to_string(out).unwrap_or_default(),
        stderr: std::fs::read_to_string(err).unwrap_or_default(),
    }
}

/// Runs the bare `sticky` on a test terminal and leaves the fake agent's UI.
fn run_on_terminal(env: &TestEnv) -> Ran {
    let mut terminal = env.sticky(Vec::<&str>::new()).on_terminal();
    terminal.expect("> ");
    terminal.send("/exit\r");
    let code = terminal.wait();
    Ran {
        code: i32::try_from(code).ok(),
        stdout: String::new(),
        stderr: String::new(),
    }
}

/// docs/agents.md's user-defined agent, configured as its "Adding an agent" section says.
fn my_agent(env: &TestEnv) -> Vec<(String, PathBuf)> {
    let page = std::fs::read_to_string(root().join("docs/agents.md")).expect("read docs/agents.md");
    let section = page
        .split("```toml\n")
        .filter_map(|rest| rest.split("```").next())
        .find(|body| body.contains("[agents.my-agent]"))
        .expect("docs/agents.md configures my-agent");
    let config = env.script("my-agent.toml", section);
    let program = env.script(
        "my-agent",
        &format!("#!{}\n{}", python().display(), crate::readme::MY_AGENT),
    );
    vec![
        ("STICKY_CONFIG".to_owned(), config),
        ("STICKY_MY_AGENT_BIN".to_owned(), program),
    ]
}

/// Checks what `row`'s line did; returns the problems found, each a line.
fn check(env: &TestEnv, row: &Row, ran: &Ran, before: usize, first_session: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if ran.code != Some(row.code) {
        problems.push(format!("exit code {:?}, not {}", ran.code, row.code));
    }
    for needle in &row.stdout {
        if !ran.stdout.contains(needle) {
            problems.push(format!("stdout lacks {needle:?}"));
        }
    }
    for needle in &row.stderr {
        if !ran.stderr.contains(needle) {
            problems.push(format!("stderr lacks {needle:?}"));
        }
    }
    // `sticky agents` and `doctor` ask each agent its version; that is no turn.
    let runs: Vec<AgentRun> = env
        .agent_runs()
        .into_iter()
        .skip(before)
        .filter(|run| run.argv() != ["--version"])
        .collect();
    let new_runs = runs.as_slice();
    match (&row.turn, new_runs) {
        (None, []) => {}
        (None, _) => problems.push(format!("the agent ran {} time(s)", new_runs.len())),
        (Some(turn), [run]) => problems.extend(check_turn(turn, run, first_session)),
        (Some(_), _) => problems.push(format!("the agent ran {} times, not once", new_runs.len())),
    }
    if let Some(expected) = row.cargo {
        let log = std::fs::read_to_string(env.scratch.join("cargo.log")).unwrap_or_default();
        if log.trim_end() != expected {
            problems.push(format!("the cargo stand-in got {log:?}, not {expected:?}"));
        }
    }
    if let Some((file, needle)) = row.file {
        let text = std::fs::read_to_string(env.project.join(file)).unwrap_or_default();
        if !text.contains(needle) {
            problems.push(format!("{file} lacks {needle:?}: {text:?}"));
        }
    }
    problems
}

/// Checks the fake agent's record of a documented turn.
fn check_turn(turn: &Turn, run: &AgentRun, first_session: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let program = run.text("program").unwrap_or_default();
    if !program.ends_with(turn.agent) {
        problems.push(format!("the agent was {program:?}, not {}", turn.agent));
    }
    let mode = if turn.interactive {
        "interactive"
    } else {
        "headless"
    };
    if run.text("mode") != Some(mode) {
        problems.push(format!("the agent ran {:?}, not {mode}", run.text("mode")));
    }
    if !turn.interactive {
        let prompt = run.prompt();
        let good = match &turn.prompt {
            Prompt::Exact(want) => prompt == want,
            Prompt::StartsWith(want) => prompt.starts_with(want.as_str()),
        };
        if !good {
            problems.push(format!(
                "the agent got the prompt {prompt:?}, not {:?}",
                turn.prompt
            ));
        }
    }
    let argv = run.argv();
    if !turn.args.is_empty() && !argv.windows(turn.args.len()).any(|w| w == turn.args) {
        problems.push(format!(
            "the agent's arguments {argv:?} lack {:?}",
            turn.args
        ));
    }
    let resumed = match turn.agent {
        "codex" => argv.iter().any(|a| a == "resume"),
        _ => run.flag("--resume").as_deref() == Some(first_session),
    };
    if resumed != turn.resumed {
        problems.push(format!(
            "the agent {} the earlier session: {argv:?}",
            if resumed { "resumed" } else { "did not resume" }
        ));
    }
    if let Some(model) = turn.model {
        if run.flag("--model").as_deref() != Some(model) {
            problems.push(format!("the agent's model is not {model}: {argv:?}"));
        }
    }
    problems
}

#[test]
fn every_documented_command_has_a_row_and_every_row_is_documented() {
    let documented = documented();
    let rows = rows();
    let texts: Vec<&str> = rows.iter().map(|row| row.text).collect();
    let missing: Vec<String> = documented
        .iter()
        .filter(|doc| !texts.contains(&doc.text.as_str()))
        .map(|doc| format!("{}: {}", doc.source, doc.text))
        .collect();
    assert!(
        missing.is_empty(),
        "documented commands with no row in tests/it/documented.rs (add one that says what \
         the command must do, after making it run as written):\n  {}",
        missing.join("\n  ")
    );
    let stale: Vec<&str> = texts
        .iter()
        .copied()
        .filter(|text| !documented.iter().any(|doc| doc.text == *text))
        .collect();
    assert!(
        stale.is_empty(),
        "rows for commands no document shows: {stale:?}"
    );
    // The extraction itself: every kind of place a command is shown is read.
    for (text, source) in [
        ("git diff | sticky \"review this\"", "README.md"),
        (
            "sticky \"fix the lint errors\" -- --permission-mode acceptEdits",
            "docs/ci.md",
        ),
        ("sticky -t review prompt", "docs/prompt.md"),
        (
            "sticky -a codex new \"port the parser\"",
            "man/sticky-new.1",
        ),
    ] {
        let found = documented.iter().find(|doc| doc.text == text);
        assert!(
            found.is_some_and(|doc| doc.source.starts_with(source)),
            "{text:?} from {source}: {found:?}"
        );
    }
}

#[test]
fn every_documented_command_runs_as_written() {
    let rows: BTreeMap<&str, Row> = rows().into_iter().map(|row| (row.text, row)).collect();
    let mut failures = Vec::new();
    let mut ran = Vec::new();
    for doc in documented() {
        let Some(row) = rows.get(doc.text.as_str()) else {
            continue; // the other test names it
        };
        let (env, bin) = project();
        let first = env.status_json()["session"]["agent_session_id"]
            .as_str()
            .expect("the earlier turn's session")
            .to_owned();
        if row.text.contains("ssh host ") {
            host(&env);
        }
        for args in &row.before {
            env.ok(args);
        }
        let extra = if row.my_agent {
            my_agent(&env)
        } else {
            vec![(
                "FAKE_CODEX_LOG".to_owned(),
                env.root().join("agent-runs.jsonl"),
            )]
        };
        let before = env.agent_runs().len();
        let output = if row.how == How::Terminal {
            run_on_terminal(&env)
        } else {
            run_line(&env, &bin, row, &extra)
        };
        let problems = check(&env, row, &output, before, &first);
        if !problems.is_empty() {
            failures.push(format!(
                "{}: `{}`\n    {}\n    --- stdout ---\n{}\n    --- stderr ---\n{}",
                doc.source,
                doc.text,
                problems.join("\n    "),
                output.stdout,
                output.stderr
            ));
        }
        ran.push(doc.text);
    }
    assert!(
        failures.is_empty(),
        "documented commands that do not do what the documents say:\n{}",
        failures.join("\n")
    );
    eprintln!(
        "ran {} documented commands:\n  {}",
        ran.len(),
        ran.join("\n  ")
    );
}
