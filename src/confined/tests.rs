use std::io::{Read, Write};
use std::os::unix::fs::symlink;

use super::*;

/// A trusted top with `a/b/file` holding "inside", and a secret outside it.
fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let top = root.path().join("top");
    std::fs::create_dir_all(top.join("a/b")).unwrap();
    std::fs::write(top.join("a/b/file"), "inside").unwrap();
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("file"), "secret").unwrap();
    (root, top, outside)
}

fn read(dir: &Dir, relative: &str) -> io::Result<String> {
    let mut text = String::new();
    dir.open_file(Path::new(relative), Access::Read)?
        .read_to_string(&mut text)?;
    Ok(text)
}

#[track_caller]
fn assert_link_refused(result: io::Result<impl std::fmt::Debug>, link: &Path) {
    let error = result.expect_err("a link must be refused");
    assert!(is_link(&error), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains(&format!("{} is a symbolic link", link.display()))
            && message.contains("remove the link"),
        "{message}"
    );
}

#[test]
fn a_plain_path_below_the_top_is_read_written_and_listed() {
    let (_root, top, _) = tree();
    let dir = Dir::open_top(&top).unwrap();
    assert_eq!(read(&dir, "a/b/file").unwrap(), "inside");

    let made = dir.create_dir_all(Path::new("c/d")).unwrap();
    assert_eq!(made.path(), top.join("c/d"));
    let permissions = std::fs::metadata(top.join("c/d")).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&permissions) & 0o777,
        0o700
    );
    made.create_new(OsStr::new("new"))
        .unwrap()
        .write_all(b"written")
        .unwrap();
    assert!(
        made.create_new(OsStr::new("new")).is_err(),
        "never over a file"
    );
    made.rename(OsStr::new("new"), &made, OsStr::new("renamed"))
        .unwrap();
    assert_eq!(read(&dir, "c/d/renamed").unwrap(), "written");
    assert_eq!(
        dir.open_dir(Path::new("c")).unwrap().entries().unwrap(),
        [(OsString::from("d"), Kind::Dir)]
    );
    assert!(dir.remove_dir_all(OsStr::new("c")).unwrap());
    assert!(!top.join("c").exists());
    assert!(
        !dir.remove_dir_all(OsStr::new("c")).unwrap(),
        "gone already"
    );
}

#[test]
fn a_link_as_the_last_component_is_refused() {
    let (_root, top, outside) = tree();
    let link = top.join("a/b/linked");
    symlink(outside.join("file"), &link).unwrap();
    let dir = Dir::open_top(&top).unwrap();
    assert_link_refused(read(&dir, "a/b/linked"), &link);
    assert_link_refused(dir.open_file(Path::new("a/b/linked"), Access::Write), &link);
    assert_link_refused(
        dir.open_file(Path::new("a/b/linked"), Access::ReadWriteCreate),
        &link,
    );
    // A directory link too, and creating through it.
    let dir_link = top.join("a/out");
    symlink(&outside, &dir_link).unwrap();
    assert_link_refused(dir.open_dir(Path::new("a/out")), &dir_link);
    assert_link_refused(dir.create_dir_all(Path::new("a/out")), &dir_link);
    assert_eq!(
        dir.open_dir(Path::new("a"))
            .unwrap()
            .kind(OsStr::new("out"))
            .unwrap(),
        Some(Kind::Link)
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("file")).unwrap(),
        "secret"
    );
}

#[test]
fn a_link_as_a_middle_directory_is_refused_and_nothing_is_written_through_it() {
    let (_root, top, outside) = tree();
    let link = top.join("a/b/mid");
    symlink(&outside, &link).unwrap();
    let dir = Dir::open_top(&top).unwrap();
    assert_link_refused(read(&dir, "a/b/mid/file"), &link);
    assert_link_refused(dir.create_dir_all(Path::new("a/b/mid/new")), &link);
    assert_link_refused(dir.parent_of(Path::new("a/b/mid/x"), true), &link);
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing created outside"
    );
    // Removing a tree removes the link, never what it leads to.
    assert!(dir.remove_dir_all(OsStr::new("a")).unwrap());
    assert_eq!(
        std::fs::read_to_string(outside.join("file")).unwrap(),
        "secret"
    );
}

#[test]
fn the_trusted_top_may_itself_be_a_link() {
    let (root, top, _) = tree();
    let home = root.path().join("home-link");
    symlink(&top, &home).unwrap();
    let dir = Dir::open_top(&home).unwrap();
    assert_eq!(read(&dir, "a/b/file").unwrap(), "inside");
    let created = Dir::create_top(&root.path().join("new/top")).unwrap();
    assert!(created.path().is_dir());
}

#[test]
fn dot_dot_dot_and_absolute_paths_are_refused_before_anything_is_opened() {
    let (_root, top, outside) = tree();
    let dir = Dir::open_top(&top).unwrap();
    for bad in [
        "../outside/file",
        "a/../../outside/file",
        "./a/b/file",
        "a/./b/file",
        "a/b/file/.",
    ] {
        let error = read(&dir, bad).expect_err(bad);
        assert!(
            error.to_string().contains("is not a plain path"),
            "{bad}: {error}"
        );
    }
    let absolute = outside.join("file");
    let error = read(&dir, absolute.to_str().unwrap()).expect_err("absolute");
    assert!(error.to_string().contains("is not a plain path"), "{error}");
    let error = dir.create_dir_all(Path::new("../escape")).expect_err("..");
    assert!(error.to_string().contains("is not a plain path"), "{error}");
    assert!(!top.parent().unwrap().join("escape").exists());
    assert!(
        dir.parent_of(Path::new(""), false).is_err(),
        "no file named"
    );
}

#[test]
fn a_fifo_or_a_directory_is_no_regular_file_and_opening_it_never_blocks() {
    let (_root, top, _) = tree();
    nix::unistd::mkfifo(&top.join("fifo"), Mode::S_IRUSR | Mode::S_IWUSR).unwrap();
    let dir = Dir::open_top(&top).unwrap();
    let error = read(&dir, "fifo").expect_err("a fifo");
    assert!(
        error.to_string().contains("is not a regular file"),
        "{error}"
    );
    assert!(read(&dir, "a").is_err(), "a directory");
    assert_eq!(dir.kind(OsStr::new("fifo")).unwrap(), Some(Kind::Other));
    assert_eq!(dir.kind(OsStr::new("none")).unwrap(), None);
}
