//! GitHub Actions expressions (`${{ ... }}` and `if:`), as far as `action.yml` and the README's
//! workflows use them: context paths (`inputs.agent-args`, `steps.plan.outputs.run`,
//! `github.event.issue.number`), string, number and boolean literals, `==`, `!=`, `!`, `&&`,
//! `||`, parentheses, the status functions, `contains` and `fromJSON`. Comparison follows GitHub's rules (strings
//! compared ignoring case, other mixes as numbers; `&&` and `||` yield an operand). Anything
//! else panics, naming it, so the action cannot drift into syntax the harness would misread.

use serde_json::Value;

/// What the status functions answer for the step being evaluated.
#[derive(Debug, Clone, Copy)]
pub struct Status {
    /// Whether an earlier step of the action failed.
    pub failed: bool,
}

/// Evaluates `expression` (without `${{ }}`) against `contexts` (an object whose keys are the
/// context names).
pub fn evaluate(expression: &str, contexts: &Value, status: Status) -> Value {
    let tokens = tokenize(expression);
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        contexts,
        status,
        expression,
    };
    let value = parser.or();
    assert!(
        parser.at == tokens.len(),
        "the harness cannot read the expression {expression:?} past token {}",
        parser.at
    );
    value
}

/// Evaluates an `if:` condition: a bare expression or one in `${{ }}`, with GitHub's implicit
/// `success() &&` unless it calls a status function itself.
pub fn condition(text: &str, contexts: &Value, status: Status) -> bool {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix("${{")
        .and_then(|rest| rest.strip_suffix("}}"))
        .unwrap_or(trimmed);
    let value = truthy(&evaluate(inner, contexts, status));
    let explicit = ["always()", "success()", "failure()", "cancelled()"]
        .iter()
        .any(|function| inner.contains(function));
    if explicit {
        value
    } else {
        !status.failed && value
    }
}

/// Replaces every `${{ expression }}` in `text` by its value as a string.
pub fn interpolate(text: &str, contexts: &Value, status: Status) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let end = after
            .find("}}")
            .unwrap_or_else(|| panic!("an unclosed ${{{{ in {text:?}"));
        out.push_str(&to_string(&evaluate(&after[..end], contexts, status)));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// A value as GitHub turns it into a string: null is empty, booleans and numbers as written.
pub fn to_string(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// GitHub's truthiness: null, false, 0 and '' are false.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Path(Vec<String>),
    Call(String),
    Comma,
    Literal(Value),
    Op(&'static str),
    Open,
    Close,
}

fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            tokens.push(Token::Open);
            i += 1;
        } else if c == ')' {
            tokens.push(Token::Close);
            i += 1;
        } else if c == ',' {
            tokens.push(Token::Comma);
            i += 1;
        } else if c == '\'' {
            let mut literal = String::new();
            i += 1;
            loop {
                assert!(i < chars.len(), "an unclosed string in {text:?}");
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        literal.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                literal.push(chars[i]);
                i += 1;
            }
            tokens.push(Token::Literal(Value::String(literal)));
        } else if let Some(op) = ["==", "!=", "&&", "||"]
            .into_iter()
            .find(|op| text[char_offset(&chars, i)..].starts_with(op))
        {
            tokens.push(Token::Op(op));
            i += 2;
        } else if c == '!' {
            tokens.push(Token::Op("!"));
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let number: String = chars[start..i].iter().collect();
            let value: f64 = number.parse().expect("a number literal");
            tokens.push(Token::Literal(serde_json::json!(value)));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | '-' | '.'))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if chars.get(i) == Some(&'(') {
                tokens.push(Token::Call(word));
                i += 1;
                continue;
            }
            tokens.push(match word.as_str() {
                "true" => Token::Literal(Value::Bool(true)),
                "false" => Token::Literal(Value::Bool(false)),
                "null" => Token::Literal(Value::Null),
                _ => Token::Path(word.split('.').map(str::to_owned).collect()),
            });
        } else {
            panic!("the harness does not know {c:?} in the expression {text:?}");
        }
    }
    tokens
}

fn char_offset(chars: &[char], index: usize) -> usize {
    chars[..index].iter().map(|c| c.len_utf8()).sum()
}

struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    contexts: &'a Value,
    status: Status,
    expression: &'a str,
}

impl Parser<'_> {
    fn or(&mut self) -> Value {
        let mut left = self.and();
        while self.eat(&Token::Op("||")) {
            let right = self.and();
            left = if truthy(&left) { left } else { right };
        }
        left
    }

    fn and(&mut self) -> Value {
        let mut left = self.comparison();
        while self.eat(&Token::Op("&&")) {
            let right = self.comparison();
            left = if truthy(&left) { right } else { left };
        }
        left
    }

    fn comparison(&mut self) -> Value {
        let left = self.unary();
        for (op, equal) in [("==", true), ("!=", false)] {
            if self.eat(&Token::Op(op)) {
                let right = self.unary();
                return Value::Bool(loose_equal(&left, &right) == equal);
            }
        }
        left
    }

    fn unary(&mut self) -> Value {
        if self.eat(&Token::Op("!")) {
            return Value::Bool(!truthy(&self.unary()));
        }
        self.primary()
    }

    fn primary(&mut self) -> Value {
        let token = self
            .tokens
            .get(self.at)
            .cloned()
            .unwrap_or_else(|| panic!("the expression {:?} ends too early", self.expression));
        self.at += 1;
        match token {
            Token::Open => {
                let value = self.or();
                assert!(
                    self.eat(&Token::Close),
                    "a missing ) in {:?}",
                    self.expression
                );
                value
            }
            Token::Literal(value) => value,
            Token::Path(path) => {
                let mut value = self.contexts;
                for key in &path {
                    value = value.get(key).unwrap_or(&Value::Null);
                }
                value.clone()
            }
            Token::Call(name) => {
                let mut args = Vec::new();
                while !self.eat(&Token::Close) {
                    if !args.is_empty() {
                        assert!(
                            self.eat(&Token::Comma),
                            "a missing , in {:?}",
                            self.expression
                        );
                    }
                    args.push(self.or());
                }
                self.call(&name, &args)
            }
            other => panic!("unexpected {other:?} in {:?}", self.expression),
        }
    }

    fn call(&self, name: &str, args: &[Value]) -> Value {
        match (name, args) {
            ("always", []) => Value::Bool(true),
            ("success", []) => Value::Bool(!self.status.failed),
            ("failure", []) => Value::Bool(self.status.failed),
            ("cancelled", []) => Value::Bool(false),
            // An array holds an equal item; a string holds the other as text, ignoring case.
            ("contains", [Value::Array(items), item]) => {
                Value::Bool(items.iter().any(|i| loose_equal(i, item)))
            }
            ("contains", [haystack, needle]) => Value::Bool(
                to_string(haystack)
                    .to_lowercase()
                    .contains(&to_string(needle).to_lowercase()),
            ),
            ("fromJSON", [text]) => serde_json::from_str(&to_string(text))
                .unwrap_or_else(|e| panic!("fromJSON of {text}: {e}")),
            _ => panic!(
                "the harness does not know {name} with {} arguments",
                args.len()
            ),
        }
    }

    fn eat(&mut self, token: &Token) -> bool {
        if self.tokens.get(self.at) == Some(token) {
            self.at += 1;
            true
        } else {
            false
        }
    }
}

/// GitHub's `==`: two strings ignoring case, else both sides as numbers.
fn loose_equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::String(a), Value::String(b)) => a.eq_ignore_ascii_case(b),
        (Value::Null, Value::Null) => true,
        _ => {
            // NaN (a string that is no number) equals nothing, as in GitHub.
            let (a, b) = (as_number(left), as_number(right));
            (a - b).abs() < f64::EPSILON
        }
    }
}

fn as_number(value: &Value) -> f64 {
    match value {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expressions_read_as_github_reads_them() {
        let contexts = json!({
            "inputs": {"agent-args": "--x", "continue": "true"},
            "steps": {"plan": {"outputs": {"run": "true"}}},
            "github": {"head_ref": "", "ref_name": "main"},
        });
        let ok = Status { failed: false };
        let failed = Status { failed: true };
        assert_eq!(evaluate("inputs.agent-args", &contexts, ok), json!("--x"));
        assert_eq!(
            evaluate("github.head_ref || github.ref_name", &contexts, ok),
            json!("main")
        );
        assert!(condition(
            "steps.plan.outputs.run == 'TRUE' && inputs.continue == 'true'",
            &contexts,
            ok
        ));
        assert!(!condition(
            "steps.plan.outputs.run == 'true'",
            &contexts,
            failed
        ));
        assert!(condition(
            "always() && steps.plan.outputs.run == 'true'",
            &contexts,
            failed
        ));
        assert!(!condition("steps.missing.outputs.x != ''", &contexts, ok));
        assert_eq!(
            interpolate(
                "a-${{ steps.plan.outputs.run }}-${{ inputs.none }}",
                &contexts,
                ok
            ),
            "a-true-"
        );
    }
}
