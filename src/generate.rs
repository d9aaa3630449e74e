//! The single source of `completions/`, `man/` and the `--help` snapshots, all rendered from
//! the clap definition in [`crate::cli`].
//!
//! `cargo run --example generate` ([`REGENERATE`]) writes them into the source tree; no build
//! script does. The committed files are checked, not trusted: a test renders them again and
//! fails, naming that command, when a committed file differs, is missing, or is left over.
//! Rendering never opens a database or touches the terminal.

use std::io;
use std::path::{Path, PathBuf};

use clap::{Command, CommandFactory, ValueEnum};
use clap_complete::{Generator, Shell};
use clap_mangen::Man;
use roff::{Roff, bold, roman};

use crate::cli::{Cli, ENVIRONMENT, EXAMPLES, EXIT_CODES};

/// The command that regenerates every file of [`files`], from the repository root.
pub const REGENERATE: &str = "cargo run --example generate";

/// The directories whose every file [`files`] renders (relative to the repository root).
pub const DIRS: &[&str] = &["completions", "man", "tests/snapshots/help"];

/// The width `--help` is rendered at: clap's width when stdout is not a terminal and COLUMNS
/// is unset, and the CLI's maximum (`max_term_width`).
const HELP_WIDTH: usize = 100;

/// One generated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Its path relative to the repository root.
    pub path: PathBuf,
    /// Its content.
    pub content: Vec<u8>,
}

/// Every generated file: a completion script per shell, a man page per command, and the
/// `--help` text of every command.
pub fn files() -> io::Result<Vec<File>> {
    let mut files = Vec::new();
    for shell in Shell::value_variants() {
        let mut content = Vec::new();
        clap_complete::generate(*shell, &mut Cli::command(), "sticky", &mut content);
        files.push(File {
            path: Path::new("completions").join(shell.file_name("sticky")),
            content,
        });
    }
    // The man pages leave out clap's `help` command (`man sticky` is that help).
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let subcommands: Vec<&Command> = commands(&root).skip(1).collect();
    for command in commands(&root) {
        files.push(File {
            path: Path::new("man").join(format!("{}.1", page_name(command))),
            content: man_page(command, &subcommands)?,
        });
    }
    let names: Vec<Option<String>> = std::iter::once(None)
        .chain(subcommands.iter().map(|c| Some(c.get_name().to_owned())))
        .collect();
    for name in names {
        let page = name
            .as_ref()
            .map_or("sticky".to_owned(), |n| format!("sticky-{n}"));
        files.push(File {
            path: Path::new("tests/snapshots/help").join(format!("{page}.txt")),
            content: help(name.as_deref()).into_bytes(),
        });
    }
    Ok(files)
}

/// What `sticky [COMMAND] --help` prints when stdout is not a terminal: parsed for real, so
/// clap chooses between its short and long layouts as it does at run time.
fn help(command: Option<&str>) -> String {
    let args = ["sticky"].into_iter().chain(command).chain(["--help"]);
    match Cli::command()
        .term_width(HELP_WIDTH)
        .try_get_matches_from(args)
    {
        Ok(_) => String::new(),
        Err(error) => error.render().to_string(),
    }
}

/// A built command and its visible subcommands (`sticky`, `sticky new`, ...).
fn commands(root: &Command) -> impl Iterator<Item = &Command> {
    let subcommands = root
        .get_subcommands()
        .filter(|command| !command.is_hide_set() && command.get_name() != "help");
    std::iter::once(root).chain(subcommands)
}

/// The name of a command's page: `sticky`, `sticky-new`.
fn page_name(command: &Command) -> &str {
    command.get_display_name().unwrap_or(command.get_name())
}

/// Writes every generated file under `root` and removes files of [`DIRS`] that are no longer
/// generated (a removed command's page); returns the paths written.
pub fn write_all(root: &Path) -> io::Result<Vec<PathBuf>> {
    let files = files()?;
    for dir in DIRS {
        std::fs::create_dir_all(root.join(dir))?;
    }
    for path in committed(root)? {
        if !files.iter().any(|file| file.path == path) {
            std::fs::remove_file(root.join(&path))?;
        }
    }
    let mut written = Vec::new();
    for file in files {
        std::fs::write(root.join(&file.path), &file.content)?;
        written.push(file.path);
    }
    Ok(written)
}

/// What in `root` differs from [`files`]: one line per changed, missing or left-over file.
pub fn stale(root: &Path) -> io::Result<Vec<String>> {
    let files = files()?;
    let mut problems = Vec::new();
    for file in &files {
        match std::fs::read(root.join(&file.path)) {
            Ok(content) if content == file.content => {}
            Ok(_) => problems.push(format!("{} is out of date", file.path.display())),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                problems.push(format!("{} is missing", file.path.display()));
            }
            Err(error) => return Err(error),
        }
    }
    for path in committed(root)? {
        if !files.iter().any(|file| file.path == path) {
            problems.push(format!("{} is no longer generated", path.display()));
        }
    }
    Ok(problems)
}

/// The files now in [`DIRS`] under `root`, relative to `root`.
fn committed(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for dir in DIRS {
        let entries = match std::fs::read_dir(root.join(dir)) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        for entry in entries {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                found.push(Path::new(dir).join(entry.file_name()));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The man page of `command`: `clap_mangen`'s sections, then EXIT STATUS, ENVIRONMENT, FILES
/// and SEE ALSO written here (the exit codes replace the "EXTRA" section `clap_mangen` would
/// make of the same text, which reads poorly as roff).
fn man_page(command: &Command, subcommands: &[&Command]) -> io::Result<Vec<u8>> {
    let man = Man::new(command.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    if command.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    let mut roff = Roff::new();
    examples(&mut roff, command);
    exit_status(&mut roff);
    environment(&mut roff);
    roff.control("SH", ["FILES"]);
    definition(
        &mut roff,
        ".sticky/sticky.db",
        "the project's state (threads, sessions, turns), in the project directory; \
         .sticky/ holds a .gitignore of * so it is never committed",
    );
    definition(
        &mut roff,
        "~/.config/sticky/config.toml",
        "the user's configuration (the platform's configuration directory; STICKY_CONFIG \
         moves it); never read from a project",
    );
    definition(
        &mut roff,
        "~/.local/share/sticky/key",
        "the user's secret key (the platform's data directory, mode 0600), which stamps each \
         database sticky makes (.sticky/sticky.db.stamp); one without the user's stamp is \
         refused until sticky trust adopts it",
    );
    roff.control("SH", ["SEE ALSO"]);
    let name = page_name(command);
    let pages: Vec<String> = std::iter::once("sticky")
        .chain(subcommands.iter().copied().map(page_name))
        .filter(|page| *page != name)
        .map(|page| format!("{page}(1)"))
        .collect();
    roff.text([roman(pages.join(", "))]);
    roff.to_writer(&mut out)?;
    // Subcommands carry no version of their own (clap_mangen would panic on them).
    if command.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}

/// EXAMPLES of `command`, from [`EXAMPLES`] (none when it has no entry).
fn examples(roff: &mut Roff, command: &Command) {
    let name = command.get_name();
    let Some((_, examples)) = EXAMPLES.iter().find(|(page, _)| *page == name) else {
        return;
    };
    roff.control("SH", ["EXAMPLES"]);
    for (line, meaning) in *examples {
        definition(roff, line, meaning);
    }
}

/// EXIT STATUS, from the table printed under `--help` ([`EXIT_CODES`]).
fn exit_status(roff: &mut Roff) {
    roff.control("SH", ["EXIT STATUS"]);
    for line in EXIT_CODES.lines().skip(1) {
        let line = line.trim();
        let (code, meaning) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        definition(roff, code, meaning.trim());
    }
}

/// ENVIRONMENT, from [`ENVIRONMENT`].
fn environment(roff: &mut Roff) {
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, meaning) in ENVIRONMENT {
        definition(roff, name, meaning);
    }
}

/// One tagged paragraph: `term` in bold, then its description.
fn definition(roff: &mut Roff, term: &str, description: &str) {
    roff.control("TP", []);
    roff.text([bold(term)]);
    roff.text([roman(description)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repository() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn committed_completions_man_pages_and_help_are_up_to_date() {
        let stale = stale(repository()).expect("read the committed files");
        assert!(
            stale.is_empty(),
            "generated files are stale; run `{REGENERATE}` and commit the result:\n  {}",
            stale.join("\n  ")
        );
    }

    #[test]
    fn every_command_has_a_man_page_with_exit_codes_and_environment() {
        let files = files().unwrap();
        let page = |name: &str| {
            let path = Path::new("man").join(name);
            let file = files.iter().find(|f| f.path == path);
            String::from_utf8(file.unwrap_or_else(|| panic!("no {name}")).content.clone()).unwrap()
        };
        for name in [
            "sticky.1",
            "sticky-new.1",
            "sticky-doctor.1",
            "sticky-prompt.1",
        ] {
            let text = page(name);
            for section in ["EXIT STATUS", "ENVIRONMENT", "SEE ALSO", "STICKY_DB"] {
                assert!(text.contains(section), "{name} lacks {section}");
            }
            assert!(
                !text.contains(".SH EXTRA"),
                "{name}: exit codes are rendered once"
            );
        }
        let root = page("sticky.1");
        assert!(root.contains("session lost"), "{root}");
        assert!(root.contains("sticky\\-threads(1)"), "{root}");
    }

    #[test]
    fn there_is_a_completion_script_for_each_shell() {
        let names: Vec<PathBuf> = files()
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .filter(|p| p.starts_with("completions"))
            .collect();
        for name in [
            "sticky.bash",
            "_sticky",
            "sticky.fish",
            "sticky.elv",
            "_sticky.ps1",
        ] {
            assert!(
                names.contains(&Path::new("completions").join(name)),
                "{name} in {names:?}"
            );
        }
    }

    #[test]
    fn writing_then_checking_finds_nothing_stale_and_removes_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("man")).unwrap();
        std::fs::write(dir.path().join("man/sticky-gone.1"), "old").unwrap();
        assert!(!stale(dir.path()).unwrap().is_empty());
        write_all(dir.path()).unwrap();
        assert_eq!(stale(dir.path()).unwrap(), Vec::<String>::new());
        assert!(!dir.path().join("man/sticky-gone.1").exists());
        std::fs::write(dir.path().join("completions/_sticky"), "changed").unwrap();
        assert_eq!(
            stale(dir.path()).unwrap(),
            ["completions/_sticky is out of date"]
        );
    }
}
