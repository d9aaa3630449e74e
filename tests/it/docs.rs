//! The documents hold together (issue 26 point 5): every relative link in README.md,
//! ARCHITECTURE.md, BENCHMARKS.md and docs/*.md leads to a file that exists and, with
//! `#anchor`, to a heading of that file as GitHub names it. Links in code (fenced blocks, code
//! spans) and to other sites are not followed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The documents whose links are checked.
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]
        .iter()
        .map(|name| root().join(name))
        .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("list docs/")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The lines of a Markdown document outside fenced blocks, with their code spans removed.
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let kept: String = line.split('`').step_by(2).collect::<Vec<_>>().join("``");
            lines.push(kept);
        }
    }
    lines
}

/// A heading's anchor as GitHub makes it: lower case, letters, digits, `-` and `_` kept,
/// spaces made `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor of a Markdown document: its headings' slugs, a repeated one numbered as GitHub
/// numbers it (`-1`, `-2`).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        if fenced {
            continue;
        }
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while !found.insert(anchor.clone()) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
    }
    found
}

/// The targets of the inline links (`[text](target)`) of one line.
fn targets(line: &str) -> Vec<String> {
    line.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &line[at + 2..];
            let end = rest.find(')')?;
            let target = rest[..end].split_whitespace().next()?;
            Some(target.to_owned())
        })
        .collect()
}

/// The problems of the relative links of `text`, the document at `path`; each a line naming
/// the link.
fn problems(path: &Path, text: &str) -> (usize, Vec<String>) {
    let dir = path.parent().expect("a document's directory");
    let name = path.strip_prefix(root()).unwrap_or(path).display();
    let mut checked = 0;
    let mut problems = Vec::new();
    for (index, line) in prose(text).iter().enumerate() {
        for target in targets(line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if file.is_empty() {
                path.to_owned()
            } else {
                dir.join(file)
            };
            if !linked.exists() {
                problems.push(format!("{name}: {target}: no file {}", linked.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            let linked_text = if file.is_empty() {
                text.to_owned()
            } else {
                std::fs::read_to_string(&linked).unwrap_or_default()
            };
            if !anchors(&linked_text).contains(anchor) {
                problems.push(format!(
                    "{name} (line {} of its prose): {target}: no heading makes #{anchor}",
                    index + 1
                ));
            }
        }
    }
    (checked, problems)
}

#[test]
fn every_relative_link_of_the_documents_leads_to_a_file_and_a_heading() {
    let mut checked = 0;
    let mut all = Vec::new();
    for path in documents() {
        let text = std::fs::read_to_string(&path).expect("read a document");
        let (count, problems) = problems(&path, &text);
        checked += count;
        all.extend(problems);
    }
    assert!(
        all.is_empty(),
        "links that lead nowhere:\n  {}",
        all.join("\n  ")
    );
    // The README's links to docs/ and back are among those checked.
    assert!(checked >= 30, "only {checked} links found");
}

#[test]
fn a_missing_file_a_missing_heading_and_github_slugs_are_told_apart() {
    let readme = root().join("README.md");
    let text = "# Top\n\n## A database elsewhere: `STICKY_DB`\n\n## Top\n\n\
                [ok](#a-database-elsewhere-sticky_db) [ok](#top-1) [ok](docs/ci.md#forks)\n\
                [gone](docs/none.md) [bad](docs/ci.md#nowhere) `[code](nowhere.md)`\n\
                [site](https://example.com/x.md)\n\n```md\n[fenced](nowhere.md)\n```\n";
    let (checked, problems) = problems(&readme, text);
    assert_eq!(checked, 5, "{problems:?}");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("docs/none.md"), "{problems:?}");
    assert!(problems[1].contains("#nowhere"), "{problems:?}");
    assert_eq!(
        slug(" In CI: the sticky GitHub Action"),
        "in-ci-the-sticky-github-action"
    );
    assert_eq!(
        slug(" The prompt and the agent's arguments"),
        "the-prompt-and-the-agents-arguments"
    );
}
