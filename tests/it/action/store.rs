//! The Actions cache and artifact store, played by a directory, keyed and scoped as GitHub's
//! are (docs.github.com, "Caching dependencies to speed up workflows", "Restrictions for
//! accessing a cache"; actions/cache's README):
//!
//! - a cache entry belongs to the ref of the run that saved it (`GITHUB_REF`); a run restores
//!   from its own ref, then its pull request's base branch, then the default branch, never a
//!   sibling's (a pull request's entries are invisible to the default branch's runs);
//! - a restore looks for `key` exactly, then for each restore key the newest entry whose key
//!   starts with it, in each scope in turn; an entry only matches the same `path` (its
//!   version), so a changed path is a miss;
//! - a key is written once per scope: saving it again is a warning, and nothing changes;
//! - an artifact belongs to its run, by name; a second upload of the name fails unless
//!   `overwrite`; the REST API lists a name's artifacts newest first (`artifacts.jsonl`
//!   records the order and each upload's time, which the fake `gh` of the tests reads as the
//!   artifact's `created_at`), each with its run's
//!   repository and head repository, and download-artifact fetches one by run and name;
//! - a run is recorded when it starts (`runs/<id>.json`: its workflow, and its head repository,
//!   a fork's for a fork's pull request), and a pull request when it is opened
//!   (`pulls/<n>.json`: its head repository), as the REST API serves them to the fake `gh`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The store's directory: `cache/<n>/` (an entry's files) beside `cache/<n>.json` (its scope,
/// key, version and order), and `artifacts/<run>/<name>/`.
pub struct Store {
    root: PathBuf,
}

/// What a cache restore found.
pub struct Restored {
    /// The key of the entry restored, if any.
    pub matched: Option<String>,
    /// Whether it was `key` itself (actions/cache's `cache-hit`).
    pub exact: bool,
}

impl Store {
    /// An empty store in `root`.
    pub fn new(root: &Path) -> Store {
        std::fs::create_dir_all(root.join("cache")).expect("create the cache store");
        std::fs::create_dir_all(root.join("artifacts")).expect("create the artifact store");
        Store {
            root: root.to_owned(),
        }
    }

    fn entries(&self) -> Vec<(u64, Value)> {
        let mut entries: Vec<(u64, Value)> = std::fs::read_dir(self.root.join("cache"))
            .expect("read the cache store")
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                let order: u64 = path.file_stem()?.to_str()?.parse().ok()?;
                (path.extension()? == "json").then(|| {
                    let text = std::fs::read_to_string(&path).expect("read a cache entry");
                    (order, serde_json::from_str(&text).expect("a cache entry"))
                })
            })
            .collect();
        entries.sort_by_key(|(order, _)| *order);
        entries
    }

    /// The store's directory, which the fake `gh` reads.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Records run `id` of workflow file `workflow` (`.github/workflows/NAME.yml`), its head
    /// in repository `head_repository` on `head_branch`, as GitHub records a run when it starts.
    pub fn begin_run(&self, id: u64, workflow: &str, head_repository: &str, head_branch: &str) {
        let run = json!({
            "id": id,
            "workflow_id": numeric_id(workflow),
            "path": workflow,
            "repository": {"id": repository_id(super::REPOSITORY), "full_name": super::REPOSITORY},
            "head_repository": {"id": repository_id(head_repository), "full_name": head_repository},
            "head_branch": head_branch,
            "head_sha": format!("{:040x}", numeric_id(&format!("{id}"))),
        });
        let dir = self.root.join("runs");
        std::fs::create_dir_all(&dir).expect("create the run store");
        std::fs::write(dir.join(format!("{id}.json")), run.to_string()).expect("record a run");
    }

    /// Opens pull request `number` from `head_repository` (this repository's own branch, or a
    /// fork); a pull request opened already keeps its head.
    pub fn open_pull(&self, number: u64, head_repository: &str) {
        let dir = self.root.join("pulls");
        std::fs::create_dir_all(&dir).expect("create the pull request store");
        let file = dir.join(format!("{number}.json"));
        if file.exists() {
            return;
        }
        let pull = json!({
            "number": number,
            "head": {"ref": format!("patch-{number}"), "repo": {"id": repository_id(head_repository), "full_name": head_repository}},
            "base": {"ref": "main", "repo": {"id": repository_id(super::REPOSITORY), "full_name": super::REPOSITORY}},
        });
        std::fs::write(file, pull.to_string()).expect("open a pull request");
    }

    /// Every cache key saved in `scope`, oldest first.
    pub fn cache_keys(&self, scope: &str) -> Vec<String> {
        self.entries()
            .into_iter()
            .filter(|(_, entry)| entry["scope"] == scope)
            .map(|(_, entry)| entry["key"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// Restores into `target` the entry for `key` or the newest one starting with a restore
    /// key, looked for in `scopes` in order, of `version` (the action's `path` as written).
    pub fn restore(
        &self,
        scopes: &[String],
        key: &str,
        restore_keys: &[String],
        version: &str,
        target: &Path,
    ) -> Restored {
        let entries = self.entries();
        for scope in scopes {
            let in_scope = || {
                entries
                    .iter()
                    .filter(|(_, e)| e["scope"] == scope.as_str() && e["version"] == version)
            };
            let exact = in_scope().find(|(_, e)| e["key"] == key);
            let found = exact.map(|found| (found, true)).or_else(|| {
                restore_keys.iter().find_map(|prefix| {
                    in_scope()
                        .filter(|(_, e)| e["key"].as_str().unwrap_or_default().starts_with(prefix))
                        .max_by_key(|(order, _)| *order)
                        .map(|found| (found, false))
                })
            });
            if let Some(((order, entry), exact)) = found {
                copy_tree(&self.root.join(format!("cache/{order}")), target);
                return Restored {
                    matched: entry["key"].as_str().map(str::to_owned),
                    exact,
                };
            }
        }
        Restored {
            matched: None,
            exact: false,
        }
    }

    /// Saves `source` as `key` in `scope`; `false` (GitHub's warning, nothing saved) when the
    /// scope has the key already.
    pub fn save(&self, scope: &str, key: &str, version: &str, source: &Path) -> bool {
        let entries = self.entries();
        if entries
            .iter()
            .any(|(_, e)| e["scope"] == scope && e["key"] == key)
        {
            return false;
        }
        let order = entries.last().map_or(0, |(order, _)| order + 1);
        copy_tree(source, &self.root.join(format!("cache/{order}")));
        let entry = json!({"scope": scope, "key": key, "version": version});
        std::fs::write(
            self.root.join(format!("cache/{order}.json")),
            entry.to_string(),
        )
        .expect("write a cache entry");
        true
    }

    /// Uploads `file` as artifact `name` of run `run_id`; `false` when the run has the name
    /// already and `overwrite` is off.
    pub fn upload(&self, run_id: &str, name: &str, file: &Path, overwrite: bool) -> bool {
        let dir = self.root.join("artifacts").join(run_id).join(name);
        if dir.exists() && !overwrite {
            return false;
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create an artifact");
        let base = file.file_name().expect("an artifact file has a name");
        std::fs::copy(file, dir.join(base)).expect("upload an artifact");
        // GitHub's `created_at`: when the upload happened, in seconds, as the REST API says it.
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("a clock after 1970")
            .as_secs();
        let line = json!({"run": run_id, "name": name, "created": created}).to_string() + "\n";
        let mut index = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.artifact_index())
            .expect("open the artifact index");
        std::io::Write::write_all(&mut index, line.as_bytes()).expect("index an artifact");
        true
    }

    /// The artifacts in upload order, one JSON line each (`run`, `name`, `created`: seconds
    /// since 1970).
    pub fn artifact_index(&self) -> PathBuf {
        self.root.join("artifacts.jsonl")
    }

    /// Downloads artifact `name` of run `run_id` into `target`; `false` when there is none.
    pub fn download(&self, run_id: &str, name: &str, target: &Path) -> bool {
        let dir = self.root.join("artifacts").join(run_id).join(name);
        if !dir.is_dir() {
            return false;
        }
        copy_tree(&dir, target);
        true
    }

    /// Evicts every cache entry, as GitHub does with entries unused for 7 days.
    pub fn evict_cache(&self) {
        std::fs::remove_dir_all(self.root.join("cache")).expect("evict the cache");
        std::fs::create_dir_all(self.root.join("cache")).expect("an empty cache");
    }

    /// The file `file_name` of artifact `name` of run `run_id`, if it was uploaded.
    pub fn artifact(&self, run_id: &str, name: &str, file_name: &str) -> Option<PathBuf> {
        let path = self
            .root
            .join("artifacts")
            .join(run_id)
            .join(name)
            .join(file_name);
        path.exists().then_some(path)
    }
}

/// The ID GitHub gives repository `full_name`: [`super::REPOSITORY_ID`] for the repository
/// the runs belong to, another for any other (a fork).
pub fn repository_id(full_name: &str) -> u64 {
    if full_name == super::REPOSITORY {
        super::REPOSITORY_ID
    } else {
        numeric_id(full_name)
    }
}

/// A stable ID for `name` (FNV-1a, nine digits): a workflow's, a fork's.
fn numeric_id(name: &str) -> u64 {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    100_000_000 + hash % 900_000_000
}

/// Copies the directory tree `from` into `to` (created), files and directories only.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a directory of the store");
    for entry in std::fs::read_dir(from).expect("read a directory of the store") {
        let entry = entry.expect("a directory entry");
        let kind = entry.file_type().expect("a file type");
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).expect("copy a file of the store");
        }
    }
}
