//! Launch files: how an app the user lets agents start is installed (docs/PROTOCOL.md,
//! "Installed apps and activation"). One file per app,
//! `$XDG_DATA_HOME/jfgui-agent/apps/SLUG.json` (default `~/.local/share/...`):
//!
//! ```json
//! {"displayName": "Sketch", "exec": ["/usr/bin/jfgui-sketch"], "activatable": true}
//! ```
//!
//! The app writes it when its user turns "Let agents start `<App>`" on and removes it when they
//! turn it off; `jfgui-agent apps forget NAME` removes it too. The daemon reads these files to
//! list installed apps and starts one (argv as written, no shell) when a call names it.
//!
//! The trust rules live here once, so the daemon, the CLI and host-sdk agree on what a file
//! means. A file starts a program as the user, so only what the user alone could have written
//! counts: the directory and the file owned by the user and not writable by group or others,
//! the file a regular file (not a symlink) of at most [`MAX_FILE_BYTES`], `exec[0]` an absolute
//! path to a regular file owned by the user or root and not writable by group or others (a
//! symlink is judged by what it points to). Anything else is [`Ignored`], with the reason.

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, vec};

use crate::{Limits, Map, Value};

/// Set to `1` in the environment of an app the daemon started: the user's launch file is
/// their yes, so the app starts with agent access on (and says so).
pub const ENV_ACTIVATED: &str = "JFGUI_ACTIVATED";
/// The largest launch file read.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// The launch files' suffix.
pub const SUFFIX: &str = ".json";
/// Longest slug a launch file is named with (the daemon's endpoint slug bound).
pub const MAX_SLUG: usize = 48;

/// One installed app, from a trusted launch file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchFile {
    /// The file's name without `.json`.
    pub slug: String,
    /// The name the app registers with.
    pub display_name: String,
    /// The program and its arguments, passed as they are (no shell).
    pub exec: Vec<String>,
}

/// A launch file that is not used, and why (one line, naming the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The file (or the directory, when that is what is wrong).
    pub path: PathBuf,
    /// Why, in words.
    pub why: String,
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "launch file {} ignored: {}", self.path.display(), self.why)
    }
}

impl std::error::Error for Ignored {}

/// `$XDG_DATA_HOME/jfgui-agent/apps` (when that is absolute), else
/// `$HOME/.local/share/jfgui-agent/apps`; `None` without either.
pub fn apps_dir() -> Option<PathBuf> {
    apps_dir_from(|name| std::env::var_os(name))
}

fn apps_dir_from(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let data = match env("XDG_DATA_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => PathBuf::from(env("HOME")?).join(".local/share"),
    };
    data.is_absolute().then(|| data.join("jfgui-agent").join("apps"))
}

/// The slug a launch file of `display_name` is named with: lower-cased, every run of
/// characters other than ASCII letters and digits one `-`, trimmed of `-`, `app` if empty,
/// at most `max` bytes. The daemon names endpoints by the same rule.
///
/// ```
/// assert_eq!(jfgui_proto::launch::base_slug("My  Notes!", 48), "my-notes");
/// assert_eq!(jfgui_proto::launch::base_slug("日本語", 48), "app");
/// ```
pub fn base_slug(display_name: &str, max: usize) -> String {
    let mut base = String::new();
    let mut pending_dash = false;
    for c in display_name.chars() {
        if c.is_ascii_alphanumeric() {
            if pending_dash && !base.is_empty() {
                base.push('-');
            }
            pending_dash = false;
            base.push(c.to_ascii_lowercase());
        } else {
            pending_dash = true;
        }
    }
    if base.is_empty() {
        base.push_str("app");
    }
    base.truncate(max);
    let trimmed = base.trim_end_matches('-').len();
    base.truncate(trimmed);
    base
}

/// Writes the launch file of `display_name` starting `exec` into `dir` (created `0700` if
/// missing), replacing an older one atomically; returns its path. `exec[0]` must pass the
/// rules the daemon applies, so a file written here is one the daemon uses.
pub fn write(dir: &Path, display_name: &str, exec: &[String]) -> Result<PathBuf, Ignored> {
    let slug = base_slug(display_name, MAX_SLUG);
    let path = dir.join(format!("{slug}{SUFFIX}"));
    let fail = |why: String| Ignored { path: path.clone(), why };
    check_exec(exec).map_err(fail)?;
    if display_name.trim().is_empty() {
        return Err(fail("displayName is empty".to_string()));
    }
    create_private_dir(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    check_dir(dir).map_err(fail)?;
    let mut object = Map::new();
    object.insert("displayName", display_name);
    object.insert("exec", exec.iter().map(|a| Value::from(a.as_str())).collect::<Vec<_>>());
    object.insert("activatable", true);
    let mut bytes = crate::encode(&Value::Object(object), &Limits::DEFAULT)
        .map_err(|e| fail(format!("cannot encode: {e}")))?;
    bytes.push(b'\n');
    crate::locations::replace_private(&path, &bytes)
        .map_err(|e| fail(format!("cannot write: {e}")))?;
    Ok(path)
}

/// Removes the launch file named `slug` from `dir`; `Ok(false)` when there was none.
pub fn remove(dir: &Path, slug: &str) -> io::Result<bool> {
    if !valid_slug(slug) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{slug:?} is not a slug")));
    }
    match fs::remove_file(dir.join(format!("{slug}{SUFFIX}"))) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Every `*.json` in `dir`, by file name: the trusted ones, and the others with the reason.
/// A missing directory holds nothing; an untrusted one makes every file in it ignored (one
/// entry naming the directory).
pub fn read_dir(dir: &Path) -> (Vec<LaunchFile>, Vec<Ignored>) {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return (Vec::new(), Vec::new()),
        _ => {}
    }
    if let Err(why) = check_dir(dir) {
        return (Vec::new(), vec![Ignored { path: dir.to_path_buf(), why }]);
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            let why = format!("cannot read the directory: {e}");
            return (Vec::new(), vec![Ignored { path: dir.to_path_buf(), why }]);
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(SUFFIX) && !name.starts_with('.'))
        .collect();
    names.sort();
    let (mut found, mut ignored) = (Vec::new(), Vec::new());
    for name in names {
        match read_file(&dir.join(name)) {
            Ok(file) => found.push(file),
            Err(e) => ignored.push(e),
        }
    }
    (found, ignored)
}

/// One launch file, judged by the rules in the module docs (the directory is checked by
/// [`read_dir`]).
pub fn read_file(path: &Path) -> Result<LaunchFile, Ignored> {
    let fail = |why: String| Ignored { path: path.to_path_buf(), why };
    let slug = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(SUFFIX))
        .filter(|s| valid_slug(s))
        .ok_or_else(|| fail("the name is not SLUG.json (a-z, 0-9 and -)".to_string()))?
        .to_string();
    let meta = fs::symlink_metadata(path).map_err(|e| fail(format!("cannot stat: {e}")))?;
    if !meta.file_type().is_file() {
        return Err(fail("not a regular file (symlinks are not followed)".to_string()));
    }
    owned_privately(&meta, false).map_err(fail)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    let bytes = fs::read(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    let value =
        crate::parse(&bytes, &Limits::DEFAULT).map_err(|e| fail(format!("not JSON: {e}")))?;
    let (display_name, exec) = members(&value).map_err(fail)?;
    check_exec(&exec).map_err(fail)?;
    Ok(LaunchFile { slug, display_name, exec })
}

/// `displayName` and `exec` of a launch file's JSON; `activatable` must be `true`, and
/// nothing else may be there.
fn members(value: &Value) -> Result<(String, Vec<String>), String> {
    let object = value.as_object().ok_or("not a JSON object")?;
    if let Some(other) = object.keys().find(|k| !["displayName", "exec", "activatable"].contains(k))
    {
        return Err(format!("unknown member {other:?}"));
    }
    if object.get("activatable").and_then(Value::as_bool) != Some(true) {
        return Err("activatable is not true".to_string());
    }
    let display_name = object
        .get("displayName")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or("displayName is not a non-empty string")?;
    let exec = object
        .get("exec")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or("exec is not a non-empty array")?;
    let exec = exec
        .iter()
        .map(|a| a.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or("exec holds something other than strings")?;
    Ok((display_name.to_string(), exec))
}

/// `exec[0]`: an absolute path to a regular file owned by the user or root and not writable
/// by group or others (a symlink judged by its target).
fn check_exec(exec: &[String]) -> Result<(), String> {
    let program = exec.first().ok_or("exec is empty")?;
    let path = Path::new(program);
    if !path.is_absolute() {
        return Err(format!("exec[0] {program:?} is not an absolute path"));
    }
    let meta = fs::metadata(path).map_err(|e| format!("exec[0] {program}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("exec[0] {program} is not a regular file"));
    }
    owned_privately(&meta, true).map_err(|why| format!("exec[0] {program}: {why}"))
}

/// A directory of launch files: a real directory, ours, not writable by group or others.
fn check_dir(dir: &Path) -> Result<(), String> {
    let meta = fs::symlink_metadata(dir).map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.file_type().is_dir() {
        return Err("not a directory (symlinks are not followed)".to_string());
    }
    owned_privately(&meta, false)
}

/// The file rule ([`judge_file`](crate::locations::judge_file)), with root accepted as the
/// owner when `root_ok` (the programs of the system are root's).
#[cfg(unix)]
fn owned_privately(meta: &fs::Metadata, root_ok: bool) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let me = crate::locations::uid();
    let owner = if root_ok && meta.uid() == 0 { me } else { meta.uid() };
    crate::locations::judge_file(owner, meta.mode(), me)
}

/// Without Unix ownership and modes nothing can be judged, so nothing is trusted.
#[cfg(not(unix))]
fn owned_privately(_meta: &fs::Metadata, _root_ok: bool) -> Result<(), String> {
    Err("launch files are only read on Unix".to_string())
}

fn valid_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug.len() <= MAX_SLUG
        && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent)?;
    }
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Dir {
            let base =
                std::env::temp_dir().join(format!("jfgui-launch-{tag}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&base);
            fs::create_dir_all(&base).unwrap();
            fs::set_permissions(&base, fs::Permissions::from_mode(0o700)).unwrap();
            Dir(base)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A program the rules accept: a private copy of a file we own.
    fn program(dir: &Path) -> String {
        let path = dir.join("prog");
        fs::write(&path, "#!/bin/sh\n").unwrap();
        chmod(&path, 0o700);
        path.to_str().unwrap().to_string()
    }

    #[test]
    fn the_data_dir_rule() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.into())
        };
        assert_eq!(
            apps_dir_from(env(&[("XDG_DATA_HOME", "/d"), ("HOME", "/h")])),
            Some(PathBuf::from("/d/jfgui-agent/apps"))
        );
        assert_eq!(
            apps_dir_from(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/share/jfgui-agent/apps"))
        );
        assert_eq!(apps_dir_from(env(&[])), None);
        assert_eq!(apps_dir_from(env(&[("HOME", "rel")])), None);
    }

    #[test]
    fn written_files_are_read_back_and_removed() {
        let base = Dir::new("rw");
        let apps = base.0.join("share/jfgui-agent/apps");
        let exec = vec![program(&base.0), "a; rm -rf $(x)".to_string()];
        let path = write(&apps, "My Sketch", &exec).unwrap();
        assert_eq!(path, apps.join("my-sketch.json"));
        let (found, ignored) = read_dir(&apps);
        assert_eq!(ignored, Vec::new());
        assert_eq!(
            found,
            vec![LaunchFile { slug: "my-sketch".into(), display_name: "My Sketch".into(), exec }]
        );
        assert!(remove(&apps, "my-sketch").unwrap());
        assert!(!remove(&apps, "my-sketch").unwrap());
        assert!(remove(&apps, "../x").is_err());
        assert_eq!(read_dir(&base.0.join("missing")), (Vec::new(), Vec::new()));
    }

    #[test]
    fn untrusted_files_are_ignored_with_the_reason() {
        let base = Dir::new("trust");
        let prog = program(&base.0);
        let apps = base.0.join("apps");
        write(&apps, "Good", std::slice::from_ref(&prog)).unwrap();
        let put = |name: &str, text: String| fs::write(apps.join(name), text).unwrap();
        let file =
            |exec: &str| format!(r#"{{"displayName":"X","exec":[{exec}],"activatable":true}}"#);
        put("relative.json", file(r#""prog""#));
        put("missing.json", file(r#""/nonexistent/prog""#));
        put("notjson.json", "{".into());
        put("off.json", r#"{"displayName":"X","exec":["/bin/sh"],"activatable":false}"#.into());
        put(
            "extra.json",
            r#"{"displayName":"X","exec":["/bin/sh"],"activatable":true,"x":1}"#.into(),
        );
        put("Upper.json", file(r#""/bin/sh""#));
        put("big.json", format!("{}{}", file(r#""/bin/sh""#), " ".repeat(70_000)));
        put("grouped.json", file(r#""/bin/sh""#));
        chmod(&apps.join("grouped.json"), 0o620);
        let loose = base.0.join("loose");
        fs::write(&loose, "").unwrap();
        chmod(&loose, 0o775);
        let link = base.0.join("link");
        std::os::unix::fs::symlink(&loose, &link).unwrap();
        put("linked-exec.json", file(&format!("{:?}", link.to_str().unwrap())));
        std::os::unix::fs::symlink(apps.join("good.json"), apps.join("symlink.json")).unwrap();
        let (found, ignored) = read_dir(&apps);
        assert_eq!(found.iter().map(|f| f.slug.as_str()).collect::<Vec<_>>(), ["good"]);
        let why = |name: &str| {
            ignored.iter().find(|i| i.path.ends_with(name)).map(|i| i.why.clone()).unwrap()
        };
        assert!(why("relative.json").contains("not an absolute path"));
        assert!(why("missing.json").contains("/nonexistent/prog"));
        assert!(why("notjson.json").contains("not JSON"));
        assert!(why("off.json").contains("activatable"));
        assert!(why("extra.json").contains("unknown member"));
        assert!(why("Upper.json").contains("SLUG.json"));
        assert!(why("big.json").contains("larger than"));
        assert!(why("grouped.json").contains("writable by group"));
        assert!(why("linked-exec.json").contains("writable by group"));
        assert!(why("symlink.json").contains("not a regular file"));
        assert_eq!(ignored.len(), 10, "{ignored:?}");

        chmod(&apps, 0o770);
        let (found, ignored) = read_dir(&apps);
        assert!(found.is_empty());
        assert_eq!(ignored.len(), 1);
        assert!(ignored[0].why.contains("writable by group"), "{ignored:?}");
        assert!(write(&apps, "Good", &[prog]).is_err(), "nothing is written into such a dir");
    }

    #[test]
    fn slugs_follow_the_endpoint_rule() {
        assert_eq!(base_slug("Notepad", 48), "notepad");
        assert_eq!(base_slug("  My  Notes — Ünïcode 2!  ", 48), "my-notes-n-code-2");
        assert_eq!(base_slug("", 48), "app");
        assert_eq!(base_slug("ab cd", 3), "ab");
    }
}
