//! The benchmarks' instruments (see `bench/run`), each a subcommand:
//!
//! - `read-pty [--raw] -- CMD...`: runs CMD on a fresh pseudo-terminal (its stdin, stdout and
//!   stderr) and reads the master in a tight loop until the output ends: the bare PTY reader,
//!   the kernel's own limit. `--raw` sets the terminal's output as sticky's headless path does
//!   (every byte as written).
//!   With sticky or `script` as CMD it is also the user's terminal around them.
//! - `read-pipe -- CMD...`: the same over a plain pipe.
//! - `relay -- CMD...`: sticky's interactive relay (`sticky::pty::run_interactive`) around CMD,
//!   with this process's stdin and stdout, so the caller can point stdout at /dev/null or a pipe
//!   (the sticky binary takes its interactive path only when stdout is a terminal).
//! - `latency [-n N] [--warmup W] -- CMD...`: runs CMD on a pseudo-terminal it owns, waits for
//!   `BENCH-READY`, then times N one-byte keystroke-to-echo round trips (after W unrecorded ones)
//!   and prints them as a JSON list of microseconds; `q` ends CMD.
//! - `rss --to FILE -- CMD...`: runs CMD and writes to FILE the peak RSS (KiB) of CMD and the
//!   children it reaped (`RUSAGE_CHILDREN` after waiting for it), then this process's own peak:
//!   a child inherits its parent's peak when it execs, so measuring from a small process keeps
//!   that floor low. (A file, since CMD may own this process's stdout, a terminal.)
//! - `seed DB PROJECT N [--per-session K]`: a database made by sticky's own store with one thread
//!   and N finished turns, on a new session every K turns (rotations, as `sticky new` makes them),
//!   each with a prompt and an answer of about 400 bytes in the search index (one in a thousand
//!   mentions a zeppelin), the agent session IDs this seed's own.
//! - `count DB`: the threads, sessions and turns (by status) of thread `main`, as JSON.
//! - `vault DIR --mib M,... [-n N] [--grow BYTES]`: the vault's cost after a turn
//!   (`sticky::vault`): for each size M, a Claude Code transcript of M MiB under `DIR/M/home`,
//!   copied into `DIR/M/vault` once; then N rounds, each over every size: BYTES appended to the
//!   transcript (as a turn adds them), timed, and the copy timed. Prints a JSON list, one
//!   object per size: `mib`, `append_us` and `copy_us` (lists), `written` (bytes each copy
//!   wrote), `first_copy_us`.
//!
//! Results go to stdout as one line (`rss`: to a file); failures to stderr with exit code 1.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use nix::libc;
use nix::sys::termios::{self, SetArg};
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use rusqlite::params;
use sticky::store::{NewSession, Store, TurnStatus};

/// The most bytes read at once.
const CHUNK: usize = 64 * 1024;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("bench_tool: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[OsString]) -> Result<ExitCode> {
    let (options, command) = match args.iter().position(|arg| arg == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (args, &[][..]),
    };
    let options: Vec<String> = options
        .iter()
        .map(|arg| arg.to_str().map(str::to_owned).context("non-UTF-8 option"))
        .collect::<Result<_>>()?;
    let Some((what, options)) = options.split_first() else {
        bail!("usage: bench_tool read-pty|read-pipe|relay|rss|latency|seed|count ...");
    };
    let flag = |name: &str| options.iter().any(|option| option == name);
    let number = |name: &str, default: usize| -> Result<usize> {
        match options.iter().position(|option| option == name) {
            Some(at) => options
                .get(at + 1)
                .context("a number must follow")?
                .parse()
                .with_context(|| format!("{name} wants a number")),
            None => Ok(default),
        }
    };
    match what.as_str() {
        "read-pty" => read_pty(command, flag("--raw")),
        "read-pipe" => read_pipe(command),
        "relay" => relay(command),
        "rss" => {
            let at = options.iter().position(|option| option == "--to");
            let to = at
                .and_then(|at| options.get(at + 1))
                .context("rss wants --to FILE")?;
            rss(command, Path::new(to))
        }
        "latency" => latency(command, number("-n", 1000)?, number("--warmup", 100)?),
        "seed" => {
            let [db, project, turns, ..] = options else {
                bail!("usage: bench_tool seed DB PROJECT N [--per-session K]");
            };
            seed(
                Path::new(db),
                Path::new(project),
                turns.parse().context("N is a number")?,
                number("--per-session", 100)?.max(1),
            )
        }
        "vault" => {
            let dir = options.first().context("usage: vault DIR --mib M,...")?;
            let at = options.iter().position(|option| option == "--mib");
            let sizes = at
                .and_then(|at| options.get(at + 1))
                .map_or("1", String::as_str)
                .split(',')
                .map(str::parse)
                .collect::<Result<Vec<usize>, _>>()
                .context("--mib wants comma-separated numbers")?;
            vault_cost(
                Path::new(dir),
                &sizes,
                number("-n", 50)?,
                number("--grow", 4096)?,
            )
        }
        "count" => {
            let [db, ..] = options else {
                bail!("usage: bench_tool count DB");
            };
            count(Path::new(db))
        }
        other => bail!("unknown subcommand {other}"),
    }
}

/// A command for portable-pty, run in the current directory with the current environment.
fn pty_command(command: &[OsString]) -> Result<CommandBuilder> {
    let Some((program, args)) = command.split_first() else {
        bail!("no command after --");
    };
    let mut builder = CommandBuilder::new(program);
    builder.args(args);
    builder.cwd(std::env::current_dir().context("current directory")?);
    Ok(builder)
}

/// Opens a pseudo-terminal and starts `command` on it; returns the master and the child.
fn spawn_on_pty(
    command: &[OsString],
    raw: bool,
) -> Result<(
    Box<dyn MasterPty + Send>,
    Box<dyn portable_pty::Child + Send + Sync>,
)> {
    let pair = native_pty_system()
        .openpty(PtySize::default())
        .context("openpty")?;
    if raw {
        let tty = pair.master.tty_name().context("the pty has no name")?;
        let slave = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&tty)
            .with_context(|| format!("open {}", tty.display()))?;
        let mut settings = termios::tcgetattr(&slave)?;
        sticky::pty::output_as_written(&mut settings);
        termios::tcsetattr(&slave, SetArg::TCSANOW, &settings)?;
    }
    let child = pair
        .slave
        .spawn_command(pty_command(command)?)
        .context("spawn on the pty")?;
    // Our copy of the slave would keep the terminal open after the child is gone.
    drop(pair.slave);
    Ok((pair.master, child))
}

/// Reads `reader` to its end in a tight loop; returns the byte count.
fn drain(reader: &mut dyn Read) -> u64 {
    let mut buf = vec![0; CHUNK];
    let mut total = 0;
    loop {
        match reader.read(&mut buf) {
            // portable-pty's reader turns EIO (every slave closed) into Ok(0).
            Ok(0) => return total,
            Ok(count) => total += count as u64,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return total,
        }
    }
}

fn exit_code(code: u32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn read_pty(command: &[OsString], raw: bool) -> Result<ExitCode> {
    let (master, mut child) = spawn_on_pty(command, raw)?;
    let mut reader = master.try_clone_reader()?;
    let started = Instant::now();
    let bytes = drain(&mut reader);
    let status = child.wait()?;
    println!("{bytes} {:.6}", started.elapsed().as_secs_f64());
    Ok(exit_code(status.exit_code()))
}

fn read_pipe(command: &[OsString]) -> Result<ExitCode> {
    let Some((program, args)) = command.split_first() else {
        bail!("no command after --");
    };
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("spawn {}", program.to_string_lossy()))?;
    let bytes = drain(child.stdout.as_mut().context("piped stdout")?);
    let status = child.wait()?;
    println!("{bytes} {:.6}", started.elapsed().as_secs_f64());
    Ok(ExitCode::from(
        u8::try_from(status.code().unwrap_or(1)).unwrap_or(1),
    ))
}

fn relay(command: &[OsString]) -> Result<ExitCode> {
    let Some((program, args)) = command.split_first() else {
        bail!("no command after --");
    };
    let spec = sticky::pty::Spec {
        program: PathBuf::from(program),
        args: args.to_vec(),
        cwd: std::env::current_dir()?,
        ..sticky::pty::Spec::default()
    };
    let (finished, _tail) = sticky::pty::run_interactive(&spec)?;
    Ok(match finished.status {
        sticky::pty::Status::Code(code) => exit_code(code.unsigned_abs()),
        sticky::pty::Status::Signal(signal) => exit_code(128 + signal.unsigned_abs()),
    })
}

fn rss(command: &[OsString], to: &Path) -> Result<ExitCode> {
    let Some((program, args)) = command.split_first() else {
        bail!("no command after --");
    };
    let own = own_peak_rss_kib()?;
    let status = Command::new(program)
        .args(args)
        .status()
        .with_context(|| format!("run {}", program.to_string_lossy()))?;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    #[allow(unsafe_code)]
    // SAFETY: getrusage writes one `rusage` into the pointer, which points at a live, writable,
    // zeroed `rusage` (a plain C struct, valid when zeroed).
    let (result, usage) = unsafe {
        let result = libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr());
        (result, usage.assume_init())
    };
    if result != 0 {
        bail!("getrusage: {}", io::Error::last_os_error());
    }
    std::fs::write(to, format!("{} {own}\n", usage.ru_maxrss))?;
    Ok(ExitCode::from(
        u8::try_from(status.code().unwrap_or(1)).unwrap_or(1),
    ))
}

/// This process's peak resident set (`VmHWM`), in KiB.
fn own_peak_rss_kib() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in /proc/self/status")
}

/// Reads until `needle` has appeared.
fn read_until(reader: &mut dyn Read, needle: &[u8]) -> Result<()> {
    let mut seen = Vec::new();
    let mut buf = [0; 4096];
    while !seen.windows(needle.len()).any(|window| window == needle) {
        let count = reader.read(&mut buf)?;
        if count == 0 {
            bail!(
                "the output ended before {:?}: {:?}",
                String::from_utf8_lossy(needle),
                String::from_utf8_lossy(&seen)
            );
        }
        seen.extend_from_slice(&buf[..count]);
    }
    Ok(())
}

fn latency(command: &[OsString], rounds: usize, warmup: usize) -> Result<ExitCode> {
    let (master, mut child) = spawn_on_pty(command, false)?;
    let mut reader = master.try_clone_reader()?;
    let mut writer = master.take_writer()?;
    read_until(&mut reader, b"BENCH-READY")?;
    let mut micros = Vec::with_capacity(rounds);
    let mut buf = [0; 4096];
    for round in 0..warmup + rounds {
        let started = Instant::now();
        writer.write_all(b"x")?;
        writer.flush()?;
        loop {
            let count = reader.read(&mut buf)?;
            if count == 0 {
                bail!("the output ended after {round} round trips");
            }
            if buf[..count].contains(&b'x') {
                break;
            }
        }
        if round >= warmup {
            micros.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    writer.write_all(b"q")?;
    writer.flush()?;
    drain(&mut reader);
    let status = child.wait()?;
    // Dropping the writer would type a newline and EOF into a terminal nobody reads any more.
    std::mem::forget(writer);
    let list: Vec<String> = micros.iter().map(|us| format!("{us:.2}")).collect();
    println!("[{}]", list.join(","));
    Ok(exit_code(status.exit_code()))
}

fn seed(db: &Path, project: &Path, turns: usize, per_session: usize) -> Result<ExitCode> {
    let project = project.canonicalize().context("the project directory")?;
    let mut store = Store::open(db)?;
    let sessions = turns.div_ceil(per_session).max(1);
    let mut ids = Vec::with_capacity(sessions);
    let mut previous = None;
    for index in 0..sessions {
        // Each seed's own IDs: `usage --all` counts turns of one agent session once.
        let agent_session_id = format!("{:08x}-0000-4000-8000-{index:012}", std::process::id());
        let session = store.immediate(|tx| {
            let thread = tx.ensure_thread("main")?;
            tx.start_session(
                thread.id,
                &NewSession {
                    agent: "claude",
                    model: None,
                    agent_session_id: Some(&agent_session_id),
                    directory: &project,
                    rotated_from: previous.map(|id| (id, "new")),
                    carried: None,
                },
            )
        })?;
        store.confirm_session(session.id)?;
        previous = Some(session.id);
        ids.push(session.id);
    }
    drop(store);
    // The turns in bulk: one transaction and one prepared statement, the rows shaped as
    // `Tx::begin_turn` and `Store::finish_turn` write them.
    let mut conn = rusqlite::Connection::open(db)?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare(
            "INSERT INTO turns (session_id, prompt, mode, pid, host, started_at, ended_at, \
             status, exit_code, duration_ms, cost_usd, input_tokens, output_tokens, answer, \
             answer_bytes) \
             VALUES (?1, ?2, 'headless', 4242, 'bench', ?3, ?3 + 1500, 'ok', 0, 1500, 0.01, \
             1000, 200, CAST(?4 AS BLOB), length(CAST(?4 AS BLOB)))",
        )?;
        // The search index (migration 6), as `begin_turn` and `finish_turn` fill it.
        let mut index =
            tx.prepare("INSERT INTO turns_text (rowid, prompt, answer) VALUES (?1, ?2, ?3)")?;
        let start = sticky::store::now() - i64::try_from(turns)? * 60_000;
        for turn in 0..turns {
            let at = start + i64::try_from(turn)? * 60_000;
            let session = ids[turn / per_session];
            let prompt = format!(
                "benchmark prompt number {turn} about the {}",
                TOPICS[turn % TOPICS.len()]
            );
            let answer = answer(turn);
            insert.execute(params![session, prompt, at, answer])?;
            index.execute(params![tx.last_insert_rowid(), prompt, answer])?;
        }
    }
    // The counts and ledger totals `begin_turn`, `finish_turn` and rotations keep on the
    // session and thread rows (as migration 4 first sums them).
    tx.execute_batch(
        "UPDATE sessions SET (turn_count, total_cost_usd, total_input_tokens, \
             total_output_tokens) = (SELECT count(*), sum(cost_usd), sum(input_tokens), \
             sum(output_tokens) FROM turns WHERE turns.session_id = sessions.id);
         UPDATE threads SET (past_turn_count, past_cost_usd, past_input_tokens, \
             past_output_tokens) = (SELECT coalesce(sum(turn_count), 0), sum(total_cost_usd), \
             sum(total_input_tokens), sum(total_output_tokens) FROM sessions \
             WHERE sessions.thread_id = threads.id AND ended_at IS NOT NULL);",
    )?;
    tx.commit()?;
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
    println!("{{\"turns\":{turns},\"sessions\":{sessions}}}");
    Ok(ExitCode::SUCCESS)
}

/// What the seeded prompts are about, in turn.
const TOPICS: &[&str] = &[
    "parser",
    "build",
    "release",
    "database",
    "migration",
    "tests",
    "linter",
    "docs",
];

/// A seeded turn's answer: about 400 bytes of prose and code words, a few of them rare (one
/// turn in a thousand mentions a zeppelin), so a search finds many turns or few.
fn answer(turn: usize) -> String {
    const WORDS: &[&str] = &[
        "the", "function", "returns", "an", "error", "when", "input", "is", "empty", "so", "we",
        "check", "it", "first", "and", "then", "call", "parse", "on", "each", "line", "of", "file",
        "which", "keeps", "state", "small", "fast", "enough", "for", "turn",
    ];
    let mut text = String::with_capacity(480);
    let mut seed = turn.wrapping_mul(2_654_435_761) | 1;
    while text.len() < 400 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        text.push_str(WORDS[seed % WORDS.len()]);
        text.push(' ');
    }
    if turn % 1000 == 7 {
        text.push_str("like a zeppelin");
    }
    text
}

fn count(db: &Path) -> Result<ExitCode> {
    let Some(store) = Store::open_existing(db)? else {
        println!("{{\"threads\":0,\"sessions\":0,\"turns\":0,\"ok\":0}}");
        return Ok(ExitCode::SUCCESS);
    };
    let threads = store.threads()?.len();
    let (sessions, turns) = match store.thread("main")? {
        Some(thread) => (store.sessions(thread.id)?, store.turns(thread.id)?),
        None => (Vec::new(), Vec::new()),
    };
    let ok = turns
        .iter()
        .filter(|turn| turn.status == TurnStatus::Ok)
        .count();
    println!(
        "{{\"threads\":{threads},\"sessions\":{},\"turns\":{},\"ok\":{ok}}}",
        sessions.len(),
        turns.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// The vault's cost after a turn that added `grow` bytes to transcripts of each of `sizes`
/// MiB (see the header), the sizes interleaved round by round so that a busy moment of the
/// machine hits them alike: what `bench/run`'s vault rows measure.
fn vault_cost(dir: &Path, sizes: &[usize], rounds: usize, grow: usize) -> Result<ExitCode> {
    use sticky::agent::{Adapter, Claude};
    let id = "00000000-0000-4000-8000-000000000001";
    // The turn each copy is made after, as a turn records it.
    let held = sticky::vault::Held {
        id: 1,
        started_at: Some(1),
    };
    // JSONL lines of about `len` bytes, as a transcript holds.
    let line = |n: usize, len: usize| {
        let pad = "x".repeat(len.saturating_sub(40));
        format!("{{\"n\":{n},\"text\":\"{pad}\"}}\n")
    };
    let mut setups = Vec::new();
    for &mib in sizes {
        let base = dir.join(format!("{mib}"));
        let (home, project) = (base.join("home"), base.join("project"));
        std::fs::create_dir_all(&project)?;
        let transcript = Claude
            .transcript(&home, &project, id)
            .context("claude names its transcript")?;
        std::fs::create_dir_all(transcript.parent().context("a parent")?)?;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&transcript)?;
        let (mut written, mut n) = (0, 0);
        while written < mib << 20 {
            let text = line(n, 1024);
            file.write_all(text.as_bytes())?;
            written += text.len();
            n += 1;
        }
        let vault = sticky::vault::Vault::new(base.join("vault"));
        let started = Instant::now();
        vault.copy(&Claude, &home, &project, id, held)?;
        let first = started.elapsed().as_secs_f64() * 1e6;
        setups.push((mib, home, project, file, vault, n, first));
    }
    let mut results: Vec<(Vec<f64>, Vec<f64>, Vec<u64>)> =
        sizes.iter().map(|_| Default::default()).collect();
    for round in 0..rounds {
        for (index, (_, home, project, file, vault, n, _)) in setups.iter_mut().enumerate() {
            let text = line(*n + round, grow);
            let started = Instant::now();
            file.write_all(text.as_bytes())?;
            results[index].0.push(started.elapsed().as_secs_f64() * 1e6);
            let started = Instant::now();
            let copied = vault.copy(&Claude, home, project, id, held)?;
            results[index].1.push(started.elapsed().as_secs_f64() * 1e6);
            results[index].2.push(copied.written);
        }
    }
    let rows: Vec<String> = setups
        .iter()
        .zip(&results)
        .map(|((mib, .., first), (append, copy, written))| {
            format!(
                "{{\"mib\":{mib},\"append_us\":{append:?},\"copy_us\":{copy:?},\"written\":{written:?},\"first_copy_us\":{first}}}"
            )
        })
        .collect();
    println!("[{}]", rows.join(","));
    Ok(ExitCode::SUCCESS)
}
