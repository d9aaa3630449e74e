//! The user's configuration: `<config dir>/sticky/config.toml` (or the absolute path
//! `STICKY_CONFIG` names; where it is, `settings` decides).
//!
//! A relative `bin` path (`./my-agent`) is taken from the file's own directory, so what runs
//! never depends on the directory sticky is started in; a bare name is looked up on PATH. A
//! leading `~/` is the user's home directory (HOME), as in a shell; `~user/` is refused, since
//! sticky looks up no other user's home.
//!
//! The file must be a regular file of at most 1 MiB: a FIFO, a device or a directory is refused
//! by what it is before anything is read from it (a FIFO nobody writes would hang every run,
//! `/dev/zero` would fill the memory). And it must be the user's (or root's) and closed to
//! others, in a directory no other user can change (its group neither, nor in the directories
//! below it that hold a relative `bin`): whoever can write it chooses the programs sticky runs
//! (`project/trust.rs` holds the rule, shared with sticky's state).
//!
//! It sets the default agent, each agent's program, extra arguments and environment, and
//! defines agents sticky does not know. It is read from the user's config directory only,
//! **never from files inside a project**: a cloned repository must not be able to choose which
//! program sticky runs or with which arguments.
//!
//! ```toml
//! default_agent = "codex"
//! vault = false                   # keep no copy of the sessions' files (on by default)
//! carry_on_change = "recap"       # a new model or agent starts with a recap (or "summary")
//! context_threshold = 80          # `status` suggests `sticky new --carry` past 80% full
//! stdin = "wait"                  # read piped input however late ("auto" by default, "skip")
//! thread = "branch"               # the thread follows the git branch (`-t @branch`; "main", "pr")
//!
//! [agents.claude]
//! bin = "/opt/claude/bin/claude"
//! args = ["--permission-mode", "acceptEdits"]
//! env = { ANTHROPIC_MODEL = "claude-sonnet-4-5" }
//!
//! [agents.my-agent]               # an agent sticky does not know
//! bin = "my-agent"
//! new = ["--session", "{session_id}"]
//! resume = ["--resume", "{session_id}"]
//! headless = ["--print", "{prompt}"]
//! model = ["--model", "{model}"]
//! session_id = "uuid"             # or { json = "/session_id" } or { regex = "session (\\S+)" }
//! ```
//!
//! A `session_id` regex is `regex-lite`'s syntax: it matches character by character, but its
//! classes `\d`, `\w`, `\s`, `\b` and `(?i)` know ASCII only, and it has no `\p{..}` (a
//! pattern it refuses is reported as an invalid `session_id` regex when the agent is built).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exit::StickyError;

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The agent a conversation starts with (`claude` when unset).
    pub default_agent: Option<String>,
    /// Settings per agent, and agents the user defines, by name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// Whether sticky keeps a copy of each session's files in its vault (`true` when unset).
    pub vault: Option<bool>,
    /// The recap a change of model or agent carries into the new session when the turn names
    /// none (`--carry`): `"recap"`, `"summary"` or `"off"` (the default).
    pub carry_on_change: Option<CarryKind>,
    /// How full the context may get, in percent of the model's window, before `status`
    /// suggests `sticky new --carry` (default 80).
    pub context_threshold: Option<u8>,
    /// What a turn with a prompt does with stdin that is not a terminal (`--stdin`): `"auto"`
    /// (the default), `"wait"` or `"skip"`.
    pub stdin: Option<StdinMode>,
    /// The thread a run uses when neither `-t` nor `STICKY_THREAD` names one: `"main"` (the
    /// default), `"branch"` (the current git branch's, as `-t @branch`) or `"pr"` (`-t @pr`).
    pub thread: Option<ThreadDefault>,
    /// Where the configuration was read from (`None` when there was no file).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// Settings of one agent; the template fields define an agent sticky does not know.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The program: a path, or a name looked up on PATH. A relative path (`./x`, `bin/x`) is
    /// taken from the configuration file's directory once the file is read.
    pub bin: Option<PathBuf>,
    /// Arguments added to every run, before the ones given after `--`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for the agent.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// User-defined agents: arguments that start a new session (`{session_id}` when sticky
    /// chooses the ID up front).
    pub new: Option<Vec<String>>,
    /// User-defined agents: arguments that resume session `{session_id}`.
    pub resume: Option<Vec<String>>,
    /// User-defined agents: arguments of a headless turn (`{prompt}` is the prompt).
    pub headless: Option<Vec<String>>,
    /// User-defined agents: arguments of an interactive run.
    pub interactive: Option<Vec<String>>,
    /// User-defined agents: arguments that choose model `{model}`, when the session has one.
    pub model: Option<Vec<String>>,
    /// User-defined agents: where the session ID comes from.
    pub session_id: Option<IdSource>,
    /// User-defined agents: text in the agent's output that means "this session is gone".
    pub lost: Option<String>,
}

impl AgentConfig {
    /// Whether this entry defines an agent of its own (rather than configuring a built-in one).
    pub fn defines_agent(&self) -> bool {
        self.new.is_some() || self.resume.is_some() || self.headless.is_some()
    }
}

/// What `carry_on_change` (and `--carry=KIND`) may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CarryKind {
    /// sticky's own record of the old session: its prompts and answers, newest first.
    Recap,
    /// A handoff summary the old session writes in one extra turn.
    Summary,
    /// Nothing is carried.
    Off,
}

impl CarryKind {
    /// The name stored with the session and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Recap => "recap",
            Self::Summary => "summary",
            Self::Off => "off",
        }
    }
}

/// What a turn does with stdin that is not a terminal (`--stdin`, `STICKY_STDIN`, the
/// configuration's `stdin`). Without prompt words stdin is the prompt, and is read unless
/// `skip` says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StdinMode {
    /// Read input from this command line's own pipeline however late it comes; go on without
    /// a pipe from elsewhere that stays silent for 3 seconds.
    Auto,
    /// Read stdin to its end, however long that takes.
    Wait,
    /// Never read stdin.
    Skip,
}

impl StdinMode {
    /// The name shown and accepted (`--stdin`, `STICKY_STDIN`, the configuration's `stdin`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Wait => "wait",
            Self::Skip => "skip",
        }
    }
}

/// What the configuration's `thread` may name: the thread a run uses when neither `-t` nor
/// `STICKY_THREAD` names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThreadDefault {
    /// Thread `main`.
    Main,
    /// The current git branch's thread, as `-t @branch` (`main` outside git).
    Branch,
    /// The pull request's thread in GitHub Actions, as `-t @pr`.
    Pr,
}

/// Where a user-defined agent's session ID comes from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdSource {
    /// sticky chooses a UUID up front and passes it as `{session_id}`.
    Uuid,
    /// A field of the agent's JSON output events: a JSON pointer (`/session_id`) or a key.
    Json(String),
    /// The first capture group (or the whole match) of a regular expression over its output.
    Regex(String),
}

impl Config {
    /// Reads one file; a missing file is an empty configuration.
    pub fn read(path: &Path) -> Result<Self, StickyError> {
        let Some(text) = read_text(path)? else {
            return Ok(Self::default());
        };
        let invalid = |message| {
            StickyError::Usage(format!(
                "invalid configuration {}: {message}",
                path.display()
            ))
        };
        let mut config = Self::parse(&text).map_err(invalid)?;
        let absolute = std::path::absolute(path).map_err(|error| {
            StickyError::Usage(format!(
                "cannot use the configuration {}: {error}",
                path.display()
            ))
        })?;
        let dir = absolute.parent().unwrap_or(Path::new("/"));
        config
            .anchor_bins(dir, crate::settings::home().ok().as_deref())
            .map_err(invalid)?;
        config.check_bin_dirs(path, dir)?;
        config.source = Some(absolute);
        Ok(config)
    }

    /// Takes each `bin` path that starts with `~/` from `home`, and each other relative one
    /// from `dir`, the configuration file's directory: the file is written once and read from
    /// wherever sticky runs, so `./my-agent` means the one beside it, never whatever a project
    /// (a cloned repository) puts in the current directory. A bare name (`my-agent`) stays a
    /// name looked up on PATH. `~user` is refused: which home it means is a shell's lookup.
    fn anchor_bins(&mut self, dir: &Path, home: Option<&Path>) -> Result<(), String> {
        use std::path::Component;
        for (agent, settings) in &mut self.agents {
            let Some(bin) = settings.bin.as_mut() else {
                continue;
            };
            let first = bin.components().next();
            if first == Some(Component::Normal("~".as_ref())) {
                let Some(home) = home else {
                    return Err(format!(
                        "`bin = \"{}\"` of agent {agent} starts with ~, and HOME is not set; \
                         write the full path",
                        bin.display()
                    ));
                };
                *bin = home.join(bin.components().skip(1).collect::<PathBuf>());
            } else if let Some(Component::Normal(name)) = first
                && name.as_encoded_bytes().starts_with(b"~")
            {
                return Err(format!(
                    "`bin = \"{}\"` of agent {agent} names another user's home, which sticky \
                     does not look up (only a leading ~/ is expanded, to HOME); write the full \
                     path",
                    bin.display()
                ));
            } else if bin.is_relative() && bin.components().count() > 1 {
                // `./x` is shown as `<dir>/x`, not `<dir>/./x`.
                let relative: PathBuf = bin
                    .components()
                    .filter(|part| *part != Component::CurDir)
                    .collect();
                *bin = dir.join(relative);
            }
        }
        Ok(())
    }

    /// Refuses a `bin` taken from the configuration's directory `dir` (`bin/claude`) whose
    /// directories below `dir` another user could change: they could put a program of their
    /// own in its place, as they could the file's (`dir` itself is [`check_dirs`]'). One that
    /// does not exist yet is left to the agent's run, which says so.
    fn check_bin_dirs(&self, path: &Path, dir: &Path) -> Result<(), StickyError> {
        for (agent, settings) in &self.agents {
            let Some(relative) = settings
                .bin
                .as_deref()
                .and_then(|b| b.strip_prefix(dir).ok())
            else {
                continue;
            };
            let mut below = dir.to_owned();
            for part in relative.parent().into_iter().flat_map(Path::components) {
                below.push(part);
                let Some((why, fix)) = shared(&below) else {
                    continue;
                };
                return Err(StickyError::Usage(format!(
                    "refusing the configuration {}: the `bin` of agent {agent} is in {}, and \
                     {why}, so another user could put a program of their own in its place, which \
                     sticky would run; make the directory yours alone ({fix}), or keep the \
                     program in a directory of your own",
                    crate::msg::shell_path(path),
                    crate::msg::shell_path(&below)
                )));
            }
        }
        Ok(())
    }

    /// Parses the text of a configuration file; the error names the line and the key.
    pub fn parse(text: &str) -> Result<Self, String> {
        let config: Self =
            toml::from_str(text).map_err(|error| error.to_string().trim_end().to_owned())?;
        if let Some(threshold) = config.context_threshold.filter(|t| !(1..=100).contains(t)) {
            return Err(format!(
                "context_threshold = {threshold} is not a percentage of the context window; \
                 give 1 to 100"
            ));
        }
        Ok(config)
    }

    /// The settings of `agent`, if the file has any.
    pub fn agent(&self, agent: &str) -> Option<&AgentConfig> {
        self.agents.get(agent)
    }
}

/// The most a configuration file may hold: a hand-written file is a few KiB.
const MAX_SIZE: u64 = 1 << 20;

/// The text of the configuration file at `path` (`None` when there is none), refused when it
/// is no regular file or larger than [`MAX_SIZE`], before anything is read from it.
fn read_text(path: &Path) -> Result<Option<String>, StickyError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |error: std::io::Error| {
        StickyError::Usage(format!(
            "cannot read the configuration {}: {error}",
            path.display()
        ))
    };
    let refuse = |what: &str| {
        StickyError::Usage(format!(
            "the configuration {} is {what}; it must be a TOML file of at most 1 MiB (STICKY_CONFIG \
             names another)",
            path.display()
        ))
    };
    let check = |metadata: &std::fs::Metadata| {
        if !metadata.is_file() {
            let kind = crate::confined::describe(metadata.file_type());
            return Err(refuse(&format!("{kind}, not a configuration file")));
        }
        if metadata.len() > MAX_SIZE {
            return Err(refuse(&format!(
                "larger than 1 MiB ({} bytes)",
                metadata.len()
            )));
        }
        Ok(())
    };
    // Checked before it is opened (opening some devices acts on them), and again once open,
    // in case it changed in between; O_NONBLOCK so that even then a FIFO cannot hang the open.
    match std::fs::metadata(path) {
        Ok(metadata) => check(&metadata)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(cannot(error)),
    }
    check_dirs(path)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(cannot)?;
    let metadata = file.metadata().map_err(cannot)?;
    check(&metadata)?;
    check_owner(path, &metadata)?;
    let mut bytes = Vec::new();
    file.take(MAX_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_SIZE {
        return Err(refuse("larger than 1 MiB"));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| refuse("not UTF-8 text"))
}

/// Refuses a configuration file another user could have written: it chooses the programs
/// sticky runs (`bin`) and their arguments, so it must be the user's (or root's, who installs
/// system files) and closed to others, as sticky's own state is (`project/trust.rs` holds the
/// one rule for both).
fn check_owner(path: &Path, metadata: &std::fs::Metadata) -> Result<(), StickyError> {
    use crate::project::Shared;
    let shown = crate::msg::shell_path(path);
    let why = match crate::project::shared_file(metadata, true) {
        None => return Ok(()),
        Some(Shared::Owner { uid, me }) => format!(
            "is owned by another user (uid {uid}, you are uid {me}), who could choose the \
             programs sticky runs (`bin`) and their arguments; if it is yours, take it over \
             (chown {me} {shown}), else remove it or set STICKY_CONFIG to a file of your own"
        ),
        Some(Shared::Writable { mode }) => format!(
            "can be written by other users (mode {mode:04o}), who could choose the programs \
             sticky runs (`bin`) and their arguments; make it yours alone (chmod go-w {shown})"
        ),
    };
    Err(StickyError::Usage(format!(
        "refusing the configuration {shown}: it {why}"
    )))
}

/// Refuses a configuration file in a directory another user could change (theirs, or one every
/// user may write without the sticky bit): they could put a file of their own in its place. The
/// directory of the name given and, when that is a link, the one of the file it leads to.
fn check_dirs(path: &Path) -> Result<(), StickyError> {
    let given = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut dirs: Vec<PathBuf> = given.parent().map(Path::to_owned).into_iter().collect();
    if let Some(real) = std::fs::canonicalize(path)
        .ok()
        .and_then(|real| real.parent().map(Path::to_owned))
        .filter(|real| !dirs.contains(real))
    {
        dirs.push(real);
    }
    for dir in dirs {
        let Some((why, fix)) = shared(&dir) else {
            continue;
        };
        return Err(StickyError::Usage(format!(
            "refusing the configuration {}: it is in {}, and {why}, so another user could put a \
             configuration of their own in its place, choosing the programs sticky runs; make \
             the directory yours alone ({fix}), or keep the file in a directory of your own \
             (STICKY_CONFIG names it)",
            crate::msg::shell_path(path),
            crate::msg::shell_path(&dir)
        )));
    }
    Ok(())
}

/// Why others could change what directory `dir` holds (another user's, or one its group or
/// every user may write without the sticky bit: `project::shared_dir_or_group`), and the
/// command that makes it the user's alone; `None` when it is, or cannot be looked at.
fn shared(dir: &Path) -> Option<(String, String)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir).ok()?;
    let why = crate::project::shared_dir_or_group(&meta)?;
    let shown = crate::msg::shell_path(dir);
    let me = nix::unistd::geteuid().as_raw();
    let fix = if meta.uid() != me && meta.uid() != 0 {
        format!("chown {me} {shown}")
    } else {
        let who = match (meta.mode() & 0o020 != 0, meta.mode() & 0o002 != 0) {
            (true, true) => "go",
            (false, true) => "o",
            _ => "g",
        };
        format!("chmod {who}-w {shown}")
    };
    Some((why, fix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_configuration_parses() {
        let config = Config::parse(
            r#"
            default_agent = "my-agent"
            [agents.claude]
            bin = "/opt/claude"
            args = ["--permission-mode", "plan"]
            env = { A = "1" }
            [agents.my-agent]
            bin = "my-agent"
            new = ["--session", "{session_id}"]
            resume = ["--resume", "{session_id}"]
            headless = ["-p", "{prompt}"]
            session_id = { regex = "session (\\S+)" }
            "#,
        )
        .unwrap();
        assert_eq!(config.default_agent.as_deref(), Some("my-agent"));
        let claude = config.agent("claude").unwrap();
        assert_eq!(claude.bin.as_deref(), Some(Path::new("/opt/claude")));
        assert!(!claude.defines_agent());
        let custom = config.agent("my-agent").unwrap();
        assert!(custom.defines_agent());
        assert_eq!(
            custom.session_id,
            Some(IdSource::Regex("session (\\S+)".into()))
        );
        let uuid = Config::parse("[agents.x]\nsession_id = \"uuid\"").unwrap();
        assert_eq!(uuid.agent("x").unwrap().session_id, Some(IdSource::Uuid));
        let carry = Config::parse("carry_on_change = \"summary\"\ncontext_threshold = 70").unwrap();
        assert_eq!(
            (carry.carry_on_change, carry.context_threshold),
            (Some(CarryKind::Summary), Some(70))
        );
        assert!(Config::parse("carry_on_change = \"everything\"").is_err());
        let stdin = Config::parse("stdin = \"skip\"").unwrap();
        assert_eq!(stdin.stdin, Some(StdinMode::Skip));
        let error = Config::parse("stdin = \"later\"").unwrap_err();
        assert!(error.contains("stdin") && error.contains("wait"), "{error}");
        let thread = Config::parse("thread = \"branch\"").unwrap();
        assert_eq!(thread.thread, Some(ThreadDefault::Branch));
        let error = Config::parse("thread = \"review\"").unwrap_err();
        assert!(
            error.contains("branch") && error.contains("main"),
            "{error}"
        );
        let error = Config::parse("context_threshold = 150").unwrap_err();
        assert!(error.contains("1 to 100"), "{error}");
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        let error =
            Config::parse("default_agent = \"x\"\n\n[agents.claude]\nbinn = \"y\"\n").unwrap_err();
        assert!(error.contains("line 4"), "{error}");
        assert!(error.contains("binn"), "{error}");
        let error = Config::parse("default_agent = 3\n").unwrap_err();
        assert!(
            error.contains("line 1") && error.contains("default_agent"),
            "{error}"
        );
    }

    #[test]
    fn a_relative_bin_is_taken_from_the_files_directory_a_bare_name_from_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(
            &file,
            "[agents.claude]\nbin = \"./wrap/claude\"\n[agents.codex]\nbin = \"bin/codex\"\n\
             [agents.gemini]\nbin = \"gemini-nightly\"\n[agents.qwen]\nbin = \"/opt/qwen\"\n",
        )
        .unwrap();
        let config = Config::read(&file).unwrap();
        let bin = |agent| config.agent(agent).unwrap().bin.clone().unwrap();
        assert_eq!(bin("claude"), dir.path().join("wrap/claude"));
        assert_eq!(bin("codex"), dir.path().join("bin/codex"));
        assert_eq!(bin("gemini"), Path::new("gemini-nightly"));
        assert_eq!(bin("qwen"), Path::new("/opt/qwen"));
        assert_eq!(config.source.as_deref(), Some(file.as_path()));
    }

    #[test]
    fn a_bin_starting_with_tilde_slash_is_under_home_tilde_user_is_refused() {
        let mut config = Config::parse("[agents.claude]\nbin = \"~/bin/claude\"\n").unwrap();
        config
            .anchor_bins(Path::new("/etc/sticky"), Some(Path::new("/home/me")))
            .unwrap();
        let bin = config.agent("claude").unwrap().bin.clone().unwrap();
        assert_eq!(bin, Path::new("/home/me/bin/claude"));
        let mut config = Config::parse("[agents.claude]\nbin = \"~/claude\"\n").unwrap();
        let error = config.anchor_bins(Path::new("/etc"), None).unwrap_err();
        assert!(error.contains("HOME is not set"), "{error}");
        for other in ["~root/bin/claude", "~root"] {
            let mut config =
                Config::parse(&format!("[agents.claude]\nbin = \"{other}\"\n")).unwrap();
            let error = config
                .anchor_bins(Path::new("/etc"), Some(Path::new("/home/me")))
                .unwrap_err();
            assert!(error.contains("another user's home"), "{error}");
        }
    }

    #[test]
    fn a_configuration_is_a_regular_file_of_at_most_1_mib() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let error = Config::read(&fifo).unwrap_err().to_string();
        assert!(
            error.contains("a FIFO (named pipe), not a configuration"),
            "{error}"
        );
        let error = Config::read(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("a directory, not a configuration"),
            "{error}"
        );
        let large = dir.path().join("large.toml");
        let size = usize::try_from(MAX_SIZE).unwrap();
        std::fs::write(&large, vec![b'#'; size + 1]).unwrap();
        let error = Config::read(&large).unwrap_err().to_string();
        assert!(error.contains("larger than 1 MiB"), "{error}");
        std::fs::write(&large, vec![b'#'; size]).unwrap();
        Config::read(&large).unwrap();
    }

    /// Whether the tests run as root, who can give a file to another user.
    fn is_root() -> bool {
        nix::unistd::geteuid().is_root()
    }

    #[test]
    fn a_configuration_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "default_agent = \"codex\"\n").unwrap();
        mode(&file, 0o664);
        let error = Config::read(&file).unwrap_err().to_string();
        assert!(
            error.contains("can be written by other users (mode 0664)")
                && error.contains(&format!("chmod go-w {}", file.display())),
            "{error}"
        );
        assert_eq!(
            crate::exit::exit_for(&error_of(&file)),
            crate::exit::Exit::Usage
        );
        mode(&file, 0o644);
        Config::read(&file).unwrap();
        // A directory every user may write: another could swap the file; with the sticky bit
        // (as /tmp has) they cannot.
        mode(dir.path(), 0o777);
        let error = Config::read(&file).unwrap_err().to_string();
        assert!(
            error.contains(&format!("it is in {}", dir.path().display()))
                && error.contains("every user may write it (mode 0777)")
                && error.contains(&format!("chmod go-w {}", dir.path().display())),
            "{error}"
        );
        mode(dir.path(), 0o1777);
        Config::read(&file).unwrap();
        // Its group alone may write it: refused as the file's group write is (review 19, L3).
        mode(dir.path(), 0o775);
        let error = Config::read(&file).unwrap_err().to_string();
        assert!(
            error.contains("others in its group may write it (mode 0775)")
                && error.contains(&format!("chmod g-w {}", dir.path().display())),
            "{error}"
        );
        mode(dir.path(), 0o1775);
        Config::read(&file).unwrap();
        // STICKY_CONFIG named as a link: the directory of the file it leads to counts too.
        let open = tempfile::tempdir().unwrap();
        let real = open.path().join("real.toml");
        std::fs::write(&real, "").unwrap();
        mode(open.path(), 0o777);
        mode(dir.path(), 0o700);
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let error = Config::read(&link).unwrap_err().to_string();
        assert!(
            error.contains(&format!("it is in {}", open.path().display())),
            "{error}"
        );
        mode(open.path(), 0o700);
    }

    /// The error of reading `file`, as `main` maps it to an exit code.
    fn error_of(file: &Path) -> anyhow::Error {
        Config::read(file).unwrap_err().into()
    }

    #[test]
    fn a_configuration_of_another_user_is_refused_one_of_root_is_not() {
        if !is_root() {
            eprintln!("skipped: needs root to give a file to another user (CI runs as root)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "").unwrap();
        std::os::unix::fs::chown(&file, Some(65_534), Some(65_534)).unwrap();
        let error = Config::read(&file).unwrap_err().to_string();
        assert!(
            error.contains("is owned by another user (uid 65534, you are uid 0)")
                && error.contains(&format!("chown 0 {}", file.display())),
            "{error}"
        );
        std::os::unix::fs::chown(&file, Some(0), Some(0)).unwrap();
        Config::read(&file).unwrap();
        // A directory of another user's: they could replace the file.
        std::os::unix::fs::chown(dir.path(), Some(65_534), Some(65_534)).unwrap();
        let error = Config::read(&file).unwrap_err().to_string();
        assert!(
            error.contains("it is owned by another user (uid 65534, you are uid 0)"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_file_is_an_empty_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::read(&dir.path().join("none.toml")).unwrap();
        assert!(config.agents.is_empty() && config.source.is_none());
    }
}
