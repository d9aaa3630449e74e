"""What the fake agents in this directory share: the run log, fault hooks, answers, the
interactive loop. Each fake (codex, gemini, qwen, opencode, copilot) reproduces its own CLI's
flags, storage, ID rules, error texts and events, citing its sources; this module holds only what
is the same for all of them, so the fakes differ exactly where the real CLIs do.

Fault hooks, for an agent named NAME (upper case: CODEX, GEMINI, ...), as in the fake claude:
  FAKE_NAME_LOG=<file>             append one JSON line per run: program, argv, cwd, PWD, stdin_tty,
                                   stdout_tty, prompt, prompt_len, prompt_bytes, prompt_source,
                                   mode, session_id, model, ignored arguments, turns answered, rc
                                   (-N for signal N), error, and agent-specific fields
  FAKE_NAME_EXIT=<n>               after the turn started (the session is stored), report an error
                                   the agent's way and exit n
  FAKE_NAME_SIGNAL=<n>             after the turn started, kill itself with signal n
  FAKE_NAME_REPORT_SESSION=<id>    report this session ID in the events (a lie; the session is
                                   still stored under its real ID)
  FAKE_NAME_SLEEP=<secs>           sleep after the turn started, before answering
  FAKE_NAME_STDERR=<text>          write this line to stderr first (the agent's own noise)
  FAKE_NAME_ANSWER=<text>          answer with this text instead of the FAKE-NAME line

The answer proves how much history the fake saw:
  FAKE-NAME turn=<n> session=<id> model=<m> saw=<JSON list of earlier prompts> you said: <prompt>
"""

import json
import os
import signal
import sys
import time

# The signals whose death is logged (see on_signal).
HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class Fake:
    """One run of a fake agent called `name`."""

    def __init__(self, name):
        self.name = name
        self.upper = name.upper()
        self.run = {
            "program": sys.argv[0],
            "argv": sys.argv[1:],
            "cwd": os.getcwd(),
            "PWD": os.environ.get("PWD"),
            "stdin_tty": sys.stdin.isatty(),
            "stdout_tty": sys.stdout.isatty(),
            "prompt": None,
            "prompt_len": None,
            "prompt_bytes": None,
            "prompt_source": "none",
            "mode": None,
            "session_id": None,
            "model": None,
            "ignored": [],
            "turns": 0,
            "rc": None,
            "error": None,
        }
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(encoding="utf-8", errors="surrogateescape")
        for sig in HANDLED_SIGNALS:
            signal.signal(sig, self.on_signal)
        noise = self.hook("STDERR")
        if noise:
            sys.stderr.write(noise + "\n")
            sys.stderr.flush()

    def hook(self, what):
        """The value of FAKE_<NAME>_<WHAT>, or None."""
        return os.environ.get(f"FAKE_{self.upper}_{what}") or None

    def log(self):
        path = self.hook("LOG")
        if path:
            with open(path, "a", encoding="utf-8", errors="surrogateescape") as log:
                log.write(json.dumps(self.run) + "\n")

    def finish(self, rc, error=None, stdout=None):
        """Ends the run: log it, write `stdout` then `error` (on stderr), exit rc."""
        self.run["rc"] = rc
        if error is not None:
            self.run["error"] = error
        self.log()
        if stdout is not None:
            sys.stdout.write(stdout)
        sys.stdout.flush()
        if error is not None:
            sys.stderr.write(error + "\n")
            sys.stderr.flush()
        sys.exit(rc)

    def on_signal(self, number, _frame):
        """Killed by sticky (interrupt, timeout): log the run, then die of the same signal."""
        self.run["rc"] = -number
        self.run["error"] = f"killed by signal {number}"
        self.log()
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)

    def reported(self, session_id):
        """The session ID the events carry: the real one unless a lie was asked for."""
        return self.hook("REPORT_SESSION") or session_id

    def set_prompt(self, prompt, source):
        self.run["prompt"] = prompt
        self.run["prompt_len"] = len(prompt)
        self.run["prompt_bytes"] = len(prompt.encode("utf-8", errors="surrogateescape"))
        self.run["prompt_source"] = source

    def answer(self, number, session_id, model, saw, prompt):
        return self.hook("ANSWER") or (
            f"FAKE-{self.upper} turn={number} session={session_id} model={model} "
            f"saw={dumps(saw)} you said: {prompt}"
        )

    def faults(self, on_exit):
        """Injected failures once the turn has started: sleep, signal, or `on_exit(code)`
        (which reports the error the agent's way and must end the run)."""
        sleep = self.hook("SLEEP")
        if sleep:
            time.sleep(float(sleep))
        sig = self.hook("SIGNAL")
        if sig:
            self.run["rc"] = -int(sig)
            self.log()
            sys.stdout.flush()
            if int(sig) in HANDLED_SIGNALS:
                signal.signal(int(sig), signal.SIG_DFL)
            os.kill(os.getpid(), int(sig))
            time.sleep(10)
        code = self.hook("EXIT")
        if code:
            on_exit(int(code))

    def interactive(self, banner, turn, exit_lines, first=None, commands=None):
        """The agent's own UI, reduced to a line loop: `banner`, then `> ` and one answer per
        line read (`turn(line)` returns the answer), until `/exit`, `/quit` or end of input;
        then `exit_lines()` (the resume hint the real UI prints) and rc 0. `first` is a prompt
        given on the command line, submitted before anything is read. `commands` maps a slash
        command (`/clear`) to a function that runs it and returns what the UI shows."""
        self.run["mode"] = "interactive"
        sys.stdout.write(banner + "\n")
        sys.stdout.flush()
        while True:
            if first is not None:
                line, first = first, None
            else:
                sys.stdout.write("> ")
                sys.stdout.flush()
                line = sys.stdin.readline()
                if line == "":
                    break
                line = line.rstrip("\r\n")
            if line in ("/exit", "/quit"):
                break
            if commands and line in commands:
                sys.stdout.write(commands[line]() + "\n")
                sys.stdout.flush()
                continue
            if not line.strip():
                continue
            self.run["turns"] += 1
            sys.stdout.write(turn(line) + "\n")
            sys.stdout.flush()
        sys.stdout.write(exit_lines())
        sys.stdout.write("\x1b[?25h")
        self.finish(0)


def dumps(value):
    """Compact JSON with UTF-8 kept as is, as the Node and Rust CLIs write it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def emit(event):
    sys.stdout.write(dumps(event) + "\n")
    sys.stdout.flush()


def read_stdin():
    return sys.stdin.buffer.read().decode("utf-8", errors="surrogateescape")


def is_uuid(text):
    parts = text.split("-")
    return [len(p) for p in parts] == [8, 4, 4, 4, 12] and all(
        c in "0123456789abcdefABCDEF" for c in text.replace("-", "")
    )


def read_jsonl(path):
    lines = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.strip()
            if line:
                lines.append(json.loads(line))
    return lines


def append_jsonl(path, record):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8", errors="surrogateescape") as f:
        f.write(dumps(record) + "\n")


def home():
    return os.path.expanduser("~")


def iso_now():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


class Options:
    """A small option parser shaped like the real CLIs': `--name value`, `--name=value`, short
    aliases, flags, `--` ending the options. Unknown options are logged and skipped (their value
    too when known to take one)."""

    def __init__(self, fake, values, flags, aliases=None, extra_values=()):
        self.fake = fake
        self.values = set(values) | set(extra_values)
        self.known = set(values)
        self.flags = set(flags)
        self.aliases = aliases or {}

    def parse(self, argv, on_error):
        opts, positional, after_dashes = {}, [], []
        i, dashes = 0, False
        while i < len(argv):
            arg = argv[i]
            if dashes:
                after_dashes.append(arg)
            elif arg == "--":
                dashes = True
            elif arg.startswith("-") and arg != "-":
                name, value = arg, None
                if arg.startswith("--") and "=" in arg:
                    name, value = arg.split("=", 1)
                name = self.aliases.get(name, name)
                if name in self.flags:
                    opts[name] = True
                elif name in self.values:
                    if value is None:
                        i += 1
                        if i >= len(argv):
                            on_error(f"error: option '{name}' argument missing")
                        value = argv[i]
                    if name in self.known:
                        opts[name] = value
                    else:
                        self.fake.run["ignored"] += [name, value]
                else:
                    self.fake.run["ignored"].append(arg)
            else:
                positional.append(arg)
            i += 1
        return opts, positional, after_dashes
