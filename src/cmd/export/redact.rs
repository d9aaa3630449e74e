//! What a readable export hides: text shaped like a secret (API keys and tokens by their known
//! prefixes, private keys, JWTs, `NAME=value` where NAME says secret) and the values of this
//! process's environment variables named like secrets, each replaced by [`REDACTED`].

use std::borrow::Cow;

use regex_lite::{Captures, Regex};

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";

/// The words of an environment variable's name (split at `_`) that make it a secret's name:
/// `ANTHROPIC_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`. Not `AUTH`
/// (`SSH_AUTH_SOCK` is a path) nor `PWD` (the current directory).
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "CREDENTIALS",
    "PAT",
];

/// The shortest environment value hidden: shorter ones (`1`, `true`, `en`) are no secret and
/// would blank every word they occur in.
const SHORTEST_VALUE: usize = 8;

/// PEM and PGP (`… PRIVATE KEY BLOCK-----`) private keys, matched over lines: to their
/// end, or to the end of the text when it was cut.
const PRIVATE_KEY: &str = r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\z)";

/// The shapes of well-known secrets, matched whole, each with a literal every match holds (a
/// line without it is not searched): Anthropic's and `OpenAI`'s keys (`sk-…`), Stripe's
/// (`sk_live_…`, `rk_test_…`), GitHub tokens (`ghp_…`, `github_pat_…`), GitLab (`glpat-…`),
/// AWS access key IDs, Google API keys (`AIza…`) and OAuth tokens (`ya29.…`), Slack tokens
/// (`xox?-…`) and webhooks, Hugging Face (`hf_…`), npm (`npm_…`), `SendGrid` (`SG.….…`), JWTs,
/// and a base64 PEM block (`LS0tLS1CRUdJTi…`: kubeconfig's `client-key-data`).
const SHAPES: &[(&str, &str)] = &[
    ("sk-", r"\bsk-[A-Za-z0-9_-]{20,}"),
    ("k_", r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("_", r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    ("github_pat_", r"\bgithub_pat_[A-Za-z0-9_]{30,}"),
    ("glpat-", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("IA", ACCESS_KEY_ID),
    ("AIza", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("ya29.", r"\bya29\.[0-9A-Za-z_-]{20,}"),
    ("xox", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "hooks.slack.com",
        r"hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
    ),
    ("hf_", r"\bhf_[A-Za-z0-9]{30,}"),
    ("npm_", r"\bnpm_[A-Za-z0-9]{36}"),
    ("SG.", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("LS0tLS1CRUdJTi", r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/=]*"),
    (
        "eyJ",
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
];

/// An AWS access key ID.
const ACCESS_KEY_ID: &str = r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b";

/// `Authorization: Bearer TOKEN` and the like: the scheme stays, the credential goes.
const BEARER: &str = r"(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{16,})";

/// A URL's password (`postgres://user:PASSWORD@host`, `redis://:PASSWORD@host`, a `/` in it
/// too): the user stays, the password goes.
const URL_PASSWORD: &str = r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)([^\s@]+)(@)";

/// curl's `-u user:PASSWORD`, `-uuser:PASSWORD` and `--user=user:PASSWORD`.
const CURL_PASSWORD: &str = r"((?:\s|^)(?:-u\s*|--user(?:=|\s+))[^\s:]+:)(\S+)()";

/// A password given on a command line: `mysql -uroot -pPASSWORD` (mysql, mysqldump,
/// mysqladmin, mariadb: the password attached to `-p`), `sshpass -p PASSWORD`, `docker login
/// -p PASSWORD`, `redis-cli -a PASSWORD`, `az login -p PASSWORD`, `htpasswd -b FILE USER
/// PASSWORD`.
const CLI_PASSWORD: &str = r#"(?i)((?:\bsshpass\s+(?:-[^p\s]\S*\s+)*-p\s*)|(?:\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p)|(?:\bdocker\s+login\b[^\n]*?\s-p\s+)|(?:\bredis-cli\b[^\n]*?\s-a\s+)|(?:\baz\s+login\b[^\n]*?\s-p\s+)|(?:\bhtpasswd\s+-[a-z]*b[a-z]*\s+(?:-[a-z]+\s+)*\S+\s+\S+\s+))('[^'\n]*'|"[^"\n]*"|[^\s'"]\S*)()"#;

/// The commands [`CLI_PASSWORD`] knows, lowercase: a line naming none is not searched for it.
const CLI_WORDS: &[&str] = &[
    "sshpass",
    "mysql",
    "mariadb",
    "docker",
    "redis-cli",
    "az",
    "htpasswd",
];

/// An option named like a secret with its value after a space: `--password VALUE`,
/// `--client-secret "VALUE"`, `-token VALUE` (the `=` form is [`ASSIGNED`]'s). Its value is
/// judged as an assignment's: a quoted one goes whole, a bare one when it looks like a secret
/// (`--token flag` in prose stays).
const OPTION: &str = r#"(?i)((?:\s|^)--?[a-z0-9_-]*(?:password|passwd|passphrase|token|secret|api[_-]?key|access[_-]?key|secret[_-]?key)\s+)(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'`$-][^\s"'`]*))"#;

/// openssl's `-passin pass:PASSWORD`, `-passout pass:…`, `-pass pass:…`.
const OPENSSL_PASSWORD: &str = r"(?i)(-pass(?:in|out)?\s+pass:)(\S+)()";

/// A `.netrc` password: after `machine HOST` or `login USER` on its line, or alone on its own
/// line (`password VALUE`).
const NETRC_PASSWORD: &str = r"(?i)((?:\b(?:machine|login)\s+\S+\s+(?:[^\n]*?\s)?|^\s*)password\s+)(\S+)(\s*$|\s+(?:machine|login|account|default|macdef)\b)";

/// A bare AWS secret access key: forty characters of base64 of both cases, searched only in a
/// text that holds an access key ID (`AKIA…`, `ASIA…`), as `credentials.csv` and `aws
/// configure` show them side by side. The characters around it are kept.
const AWS_SECRET: &str = r"(^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})($|[^A-Za-z0-9/+=])";

/// Docker's `config.json` credentials: `"auth": "BASE64"` (user and password).
const DOCKER_AUTH: &str = r#"(?i)("auth"\s*:\s*")([A-Za-z0-9+/=]{8,})(")"#;

/// The words of the names [`ASSIGNED`] looks for, lowercase: a line holding none is not
/// searched for assignments.
const NAME_WORDS: &[&str] = &["key", "secret", "token", "passw", "credential"];

/// `NAME = value`, `NAME: "value"`, `--name=value` where NAME holds a secret's word: the name
/// stays, the value goes: a quoted one whole (spaces and all), a bare one when it looks like a
/// secret (see [`secret_value`]).
const ASSIGNED: &str = r#"(?i)\b([A-Za-z0-9_-]*(?:api[_-]?key|secret|token|password|passwd|passphrase|credentials?|private[_-]?key|access[_-]?key|account[_-]?key)[A-Za-z0-9_-]*)(["']?\s*[:=]\s*)(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'`,;()\[\]{}<>]+)(\(?))"#;

/// Replaces secrets in the texts of one export.
#[derive(Debug)]
pub struct Redactor {
    private_key: Regex,
    shapes: Vec<(&'static str, Regex)>,
    bearer: Regex,
    url_password: Regex,
    curl_password: Regex,
    cli_password: Regex,
    docker_auth: Regex,
    assigned: Regex,
    option: Regex,
    openssl_password: Regex,
    netrc_password: Regex,
    access_key_id: Regex,
    aws_secret: Regex,
    /// The values of the environment's secret variables, longest first (so a value holding
    /// another goes whole).
    values: Vec<String>,
}

impl Redactor {
    /// A redactor that also hides the values of `environment`'s variables named like secrets.
    fn new(environment: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut values: Vec<String> = environment
            .into_iter()
            .filter(|(name, value)| secret_name(name) && value.len() >= SHORTEST_VALUE)
            .map(|(_, value)| value)
            .collect();
        values.sort_by_key(|value| std::cmp::Reverse(value.len()));
        values.dedup();
        let compiled = |pattern: &str| Regex::new(pattern).expect("the patterns compile");
        Self {
            private_key: compiled(PRIVATE_KEY),
            shapes: SHAPES
                .iter()
                .map(|(literal, pattern)| (*literal, compiled(pattern)))
                .collect(),
            bearer: compiled(BEARER),
            url_password: compiled(URL_PASSWORD),
            curl_password: compiled(CURL_PASSWORD),
            cli_password: compiled(CLI_PASSWORD),
            docker_auth: compiled(DOCKER_AUTH),
            assigned: compiled(ASSIGNED),
            option: compiled(OPTION),
            openssl_password: compiled(OPENSSL_PASSWORD),
            netrc_password: compiled(NETRC_PASSWORD),
            access_key_id: compiled(ACCESS_KEY_ID),
            aws_secret: compiled(AWS_SECRET),
            values,
        }
    }

    /// A redactor for this process's environment (variables whose name or value is not UTF-8
    /// are passed over: no secret name is).
    pub fn from_environment() -> Self {
        Self::new(std::env::vars_os().filter_map(|(name, value)| {
            Some((name.into_string().ok()?, value.into_string().ok()?))
        }))
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        for value in &self.values {
            if text.contains(value.as_str()) {
                text = Cow::Owned(text.replace(value.as_str(), REDACTED));
            }
        }
        if text.contains("PRIVATE KEY") {
            text = replaced(text, &self.private_key, |_| REDACTED.to_owned());
        }
        // Before the lines hide the access key ID that says a secret key is near.
        if (text.contains("AKIA") || text.contains("ASIA")) && self.access_key_id.is_match(&text) {
            text = replaced(text, &self.aws_secret, |caps| {
                let key = &caps[2];
                let mixed = key.chars().any(|c| c.is_ascii_uppercase())
                    && key.chars().any(|c| c.is_ascii_lowercase());
                let key = if mixed { REDACTED } else { key };
                format!("{}{key}{}", &caps[1], &caps[3])
            });
        }
        // The rest never spans lines: each line is searched only for the patterns whose
        // literal it holds, which keeps a long answer's export fast.
        let mut out = String::new();
        let mut changed = false;
        for line in text.split_inclusive('\n') {
            let clean = self.redact_line(line);
            changed |= matches!(clean, Cow::Owned(_));
            out.push_str(&clean);
        }
        if changed { Cow::Owned(out) } else { text }
    }

    /// One line with its secrets replaced.
    fn redact_line<'a>(&self, line: &'a str) -> Cow<'a, str> {
        let mut line = Cow::Borrowed(line);
        for (literal, shape) in &self.shapes {
            if line.contains(literal) {
                line = replaced(line, shape, |_| REDACTED.to_owned());
            }
        }
        let lower = line.to_ascii_lowercase();
        if lower.contains("bearer") || lower.contains("basic") {
            line = replaced(line, &self.bearer, |caps| {
                format!("{}{}{REDACTED}", &caps[1], &caps[2])
            });
        }
        let password = |caps: &Captures<'_>| {
            if &caps[2] == REDACTED {
                return caps[0].to_owned();
            }
            format!("{}{REDACTED}{}", &caps[1], &caps[3])
        };
        if lower.contains("://") {
            line = replaced(line, &self.url_password, password);
        }
        if lower.contains("-u") {
            line = replaced(line, &self.curl_password, password);
        }
        if CLI_WORDS.iter().any(|word| lower.contains(word)) {
            line = replaced(line, &self.cli_password, password);
        }
        if lower.contains("\"auth\"") {
            line = replaced(line, &self.docker_auth, password);
        }
        if lower.contains("pass:") {
            line = replaced(line, &self.openssl_password, password);
        }
        if lower.contains("password") {
            line = replaced(line, &self.netrc_password, password);
        }
        if NAME_WORDS.iter().any(|word| lower.contains(word)) {
            line = replaced(line, &self.option, |caps| {
                let quoted = quoted(caps, 2);
                match hidden(quoted, caps.get(4).map(|bare| bare.as_str())) {
                    Some(value) => format!("{}{value}", &caps[1]),
                    None => caps[0].to_owned(),
                }
            });
            line = replaced(line, &self.assigned, |caps| {
                let (name, separator) = (&caps[1], &caps[2]);
                // `token = make_token(...)`: a call, not a value.
                let bare = caps
                    .get(5)
                    .filter(|_| caps.get(6).is_none_or(|open| open.as_str().is_empty()));
                match hidden(quoted(caps, 3), bare.map(|bare| bare.as_str())) {
                    Some(value) => format!("{name}{separator}{value}"),
                    None => caps[0].to_owned(),
                }
            });
        }
        line
    }
}

/// `text` with `pattern`'s matches replaced by what `with` makes of them.
fn replaced<'a>(
    text: Cow<'a, str>,
    pattern: &Regex,
    with: impl Fn(&Captures<'_>) -> String,
) -> Cow<'a, str> {
    if !pattern.is_match(&text) {
        return text;
    }
    Cow::Owned(
        pattern
            .replace_all(&text, |caps: &Captures<'_>| with(caps))
            .into_owned(),
    )
}

/// The value quoted in group `at` (`"…"`) or `at + 1` (`'…'`) of `caps`, with its quote.
fn quoted<'t>(caps: &Captures<'t>, at: usize) -> Option<(&'t str, char)> {
    caps.get(at)
        .map(|value| (value.as_str(), '"'))
        .or_else(|| caps.get(at + 1).map(|value| (value.as_str(), '\'')))
}

/// What a value given to a secret's name becomes, `None` to keep it: a quoted one (with its
/// quote) goes whole unless it is too short to be a secret, a bare one when it looks like one
/// (see [`secret_value`]); one already hidden stays.
fn hidden(quoted: Option<(&str, char)>, bare: Option<&str>) -> Option<String> {
    if let Some((value, quote)) = quoted {
        return (value.len() >= 6 && value != REDACTED)
            .then(|| format!("{quote}{REDACTED}{quote}"));
    }
    let value = bare?;
    (value != REDACTED && secret_value(value)).then(|| REDACTED.to_owned())
}

/// Whether an environment variable's name says it holds a secret.
fn secret_name(name: &str) -> bool {
    name.to_ascii_uppercase()
        .split('_')
        .any(|word| SECRET_WORDS.contains(&word))
}

/// Whether a bare value assigned to a secret's name looks like a secret rather than code
/// (`token = tokens.next`, `password: str`): eight characters or more with a digit or both
/// cases, or sixteen or more of letters, digits and `-` alone (a hex or base64 token; not a
/// `snake_case` name).
fn secret_value(value: &str) -> bool {
    let digit = value.chars().any(|c| c.is_ascii_digit());
    let mixed = value.chars().any(char::is_uppercase) && value.chars().any(char::is_lowercase);
    let token_like =
        value.len() >= 16 && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (value.len() >= SHORTEST_VALUE && (digit || mixed)) || token_like
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new([
            (
                "MY_SERVICE_TOKEN".to_owned(),
                "s3rv1ce-t0ken-value".to_owned(),
            ),
            ("SSH_AUTH_SOCK".to_owned(), "/tmp/ssh-agent.sock".to_owned()),
            ("PWD".to_owned(), "/home/me/project".to_owned()),
            ("HOME".to_owned(), "/home/me".to_owned()),
            ("SHORT_KEY".to_owned(), "abc".to_owned()),
        ])
    }

    /// One row per rule: what goes in, what comes out.
    const ROWS: &[(&str, &str, &str)] = &[
        (
            "an environment secret's value",
            "the token is s3rv1ce-t0ken-value here",
            "the token is [redacted] here",
        ),
        (
            "a path in a variable named AUTH is no secret",
            "socket /tmp/ssh-agent.sock",
            "socket /tmp/ssh-agent.sock",
        ),
        (
            "PWD is the directory",
            "in /home/me/project",
            "in /home/me/project",
        ),
        (
            "an Anthropic key",
            "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
            "key [redacted]",
        ),
        (
            "a GitHub token",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345 ok",
            "[redacted] ok",
        ),
        ("an AWS key id", "AKIAIOSFODNN7EXAMPLE", "[redacted]"),
        (
            "a JWT",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "[redacted]",
        ),
        (
            "a bearer header keeps its scheme",
            "Authorization: Bearer abcdef0123456789abcdef",
            "Authorization: Bearer [redacted]",
        ),
        (
            "an assignment keeps its name",
            "export DB_PASSWORD=Hunter2Hunter2",
            "export DB_PASSWORD=[redacted]",
        ),
        (
            "a quoted value",
            r#"api_key: "letmein""#,
            r#"api_key: "[redacted]""#,
        ),
        (
            "code that names a token is kept",
            "let token = tokens.next();",
            "let token = tokens.next();",
        ),
        ("a type is kept", "password: String,", "password: String,"),
        (
            "a private key, to its end",
            "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nz",
            "a\n[redacted]\nz",
        ),
        (
            "a private key cut short, to the end",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow",
            "[redacted]",
        ),
        (
            "a kubeconfig client key",
            "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=",
            "    client-key-data: [redacted]",
        ),
        (
            "a docker registry credential",
            r#"    "auth": "dXNlcjpTM2NyZXRQYXNzOTk=""#,
            r#"    "auth": "[redacted]""#,
        ),
        (
            "a mysql password attached to -p",
            "mysql -uroot -pS3cretPass99 app",
            "mysql -uroot -p[redacted] app",
        ),
        (
            "mysql asking for the password",
            "mysql -uroot -p app",
            "mysql -uroot -p app",
        ),
        (
            "an sshpass password",
            "sshpass -p 'Hunter2Hunter2' ssh host",
            "sshpass -p [redacted] ssh host",
        ),
        (
            "an az login password",
            "az login -u me@example.com -p Azur3Passw0rdX",
            "az login -u me@example.com -p [redacted]",
        ),
        (
            "an htpasswd password",
            "htpasswd -bc file user Htp4sswdSecret",
            "htpasswd -bc file user [redacted]",
        ),
        (
            "htpasswd asking for the password",
            "htpasswd -c file user",
            "htpasswd -c file user",
        ),
        (
            "a SendGrid key",
            "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG ok",
            "[redacted] ok",
        ),
        (
            "mkdir -p is no password",
            "mkdir -p build/out",
            "mkdir -p build/out",
        ),
        (
            "plain prose",
            "fix the bug in main.rs",
            "fix the bug in main.rs",
        ),
        (
            "a URL's password, its user kept",
            "postgres://admin:Sup3rS3cretPw@db.example.com/prod",
            "postgres://admin:[redacted]@db.example.com/prod",
        ),
        (
            "curl's -u password",
            "curl -u admin:hunter2hunter2 https://x",
            "curl -u admin:[redacted] https://x",
        ),
        (
            "a quoted passphrase, whole",
            r#"password: "correct horse battery staple""#,
            r#"password: "[redacted]""#,
        ),
        (
            "a Stripe key",
            "sk_live_0123456789abcdefABCDEF",
            "[redacted]",
        ),
        (
            "a Google OAuth token",
            "ya29.a0AfH6SMBx0123456789abcdefghij",
            "[redacted]",
        ),
        (
            "a Slack webhook",
            "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
            "https://[redacted]",
        ),
        (
            "a long lowercase token",
            "token=abcdefghijklmnopqrstuvwx",
            "token=[redacted]",
        ),
        (
            "an Azure connection string's key",
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abcDEF123456789+/abcdefgh==;",
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=[redacted];",
        ),
        (
            "a port is no password",
            "curl https://localhost:8080/health and sort -U x",
            "curl https://localhost:8080/health and sort -U x",
        ),
        (
            "a call is code",
            "let token = make_token_for(user);",
            "let token = make_token_for(user);",
        ),
        (
            "a snake_case name is code",
            "api_key = default_api_key_name",
            "api_key = default_api_key_name",
        ),
        (
            "an option's password after a space (review 6)",
            "az login --password AzPassw0rd99 -u me",
            "az login --password [redacted] -u me",
        ),
        (
            "an option's quoted secret after a space",
            r#"tool --client-secret "s3cret value" run"#,
            r#"tool --client-secret "[redacted]" run"#,
        ),
        (
            "an option named in prose is kept",
            "use the --token flag, or --password-stdin -u me",
            "use the --token flag, or --password-stdin -u me",
        ),
        (
            "docker login's -p (review 6)",
            "docker login -u me -p D0ckerPassw0rd registry.example.com",
            "docker login -u me -p [redacted] registry.example.com",
        ),
        (
            "redis-cli's -a (review 6)",
            "redis-cli -h cache -a R3disPassw0rd99 ping",
            "redis-cli -h cache -a [redacted] ping",
        ),
        (
            "a .netrc password (review 6)",
            "machine api.example.com login me password N3tRcPassw0rd",
            "machine api.example.com login me password [redacted]",
        ),
        (
            "a .netrc password on its own line",
            "machine x\n  login me\n  password N3tRcPassw0rd\n",
            "machine x\n  login me\n  password [redacted]\n",
        ),
        (
            "openssl's -passin (review 6)",
            "openssl rsa -in k.pem -passin pass:0pensslPw99 -out x",
            "openssl rsa -in k.pem -passin pass:[redacted] -out x",
        ),
        (
            "a bare AWS secret key beside its key id (review 6)",
            "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
            "[redacted],[redacted]\n",
        ),
        (
            "a commit hash beside a key id is kept",
            "AKIAIOSFODNN7EXAMPLE in 0123456789abcdef0123456789abcdef01234567",
            "[redacted] in 0123456789abcdef0123456789abcdef01234567",
        ),
        (
            "forty characters with no key id near are kept",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        (
            "a URL without a password",
            "see https://example.com/a:b and git@github.com:x/y",
            "see https://example.com/a:b and git@github.com:x/y",
        ),
    ];

    #[test]
    fn secrets_are_replaced_and_code_is_not() {
        let redactor = redactor();
        for (rule, input, expected) in ROWS {
            assert_eq!(redactor.redact(input), *expected, "{rule}");
        }
    }

    #[test]
    fn secret_names_are_read_by_their_words() {
        for name in [
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "db_password",
        ] {
            assert!(secret_name(name), "{name}");
        }
        for name in [
            "SSH_AUTH_SOCK",
            "PWD",
            "KEYBOARD_LAYOUT",
            "TOKENIZERS_PARALLELISM",
            "HOME",
        ] {
            assert!(!secret_name(name), "{name}");
        }
    }

    /// A password in a connection URL and a quoted passphrase with spaces go whole (the third
    /// review found them leaking whole or in part).
    #[test]
    fn url_passwords_and_quoted_passphrases_are_redacted_whole() {
        let redactor = redactor();
        for (input, secret) in [
            (
                "DATABASE_URL=postgres://admin:Sup3rS3cretPw@db.example.com/prod",
                "Sup3rS3cretPw",
            ),
            (
                r#"password: "correct horse battery staple""#,
                "battery staple",
            ),
            ("PASSWORD='hunter2 is my password'", "is my password"),
        ] {
            let out = redactor.redact(input);
            assert!(!out.contains(secret), "{input} -> {out}");
        }
    }

    /// The fourth review found these kept: a URL's password with no user (`redis://:PW@host`, Redis's own
    /// form) or holding a `/`, and curl's `--user=U:PW` and `-uU:PW`, leak whole.
    #[test]
    fn url_and_curl_passwords_in_every_form_are_redacted() {
        let redactor = redactor();
        for (input, secret) in [
            (
                "REDIS_URL=redis://:S3cretRedisPw@cache:6379",
                "S3cretRedisPw",
            ),
            ("curl --user=alice:S3cretPw1 https://x", "S3cretPw1"),
            ("curl -ualice:S3cretPw2 https://x", "S3cretPw2"),
            ("postgres://u:ab/Cd9xyz@db/x", "Cd9xyz"),
        ] {
            let out = redactor.redact(input);
            assert!(!out.contains(secret), "{input} -> {out}");
        }
    }

    /// A PGP private key, whose armour line ends in `PRIVATE KEY BLOCK-----`, goes whole (the
    /// fourth review found it kept).
    #[test]
    fn a_pgp_private_key_block_is_redacted_whole() {
        let redactor = redactor();
        let input = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGS3cr3tK3yMat3r1alxyz\n-----END PGP PRIVATE KEY BLOCK-----\n";
        let out = redactor.redact(input);
        assert!(!out.contains("lQOYBGS3cr3tK3yMat3r1alxyz"), "{out}");
    }
}
