//! ENDPOINT resolution: exact slug, then exact display name, then unique slug prefix,
//! over the daemon's `apps/list`. Ambiguous or unknown names list the candidates (exit 3).

use std::path::PathBuf;
use std::time::Duration;

use jfgui_proto::{Map, Value};

use crate::client::{Client, Peer, connect_stream};
use crate::exit::{Exit, Failure};
use crate::transport::{self, Daemon, Reader, Writer};

/// One row of `apps/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppEntry {
    /// Endpoint slug (ASCII, unique).
    pub slug: String,
    /// Display name, intact (Unicode, spaces).
    pub display_name: String,
    /// The app's process id, when known.
    pub pid: Option<u64>,
    /// Whether the dispatcher is enabled (only enabled apps have an endpoint).
    pub enabled: bool,
    /// Number of registered actions.
    pub action_count: Option<u64>,
    /// The endpoint socket, `null` while disabled.
    pub endpoint: Option<PathBuf>,
    /// `false` for an installed app that is not running (a command naming it starts it).
    pub running: bool,
}

/// Decodes the `apps/list` result.
pub fn parse_apps(result: &Map) -> Result<Vec<AppEntry>, Failure> {
    let bad = |what: &str| {
        Failure::new(Exit::Protocol, "malformed_response", format!("apps/list answered {what}"))
    };
    let Some(rows) = result.get("apps").and_then(Value::as_array) else {
        return Err(bad("without an `apps` array"));
    };
    rows.iter()
        .map(|row| {
            let slug =
                row.get("slug").and_then(Value::as_str).ok_or_else(|| bad("a row without slug"))?;
            Ok(AppEntry {
                slug: slug.to_string(),
                display_name: row
                    .get("displayName")
                    .and_then(Value::as_str)
                    .unwrap_or(slug)
                    .to_string(),
                pid: row.get("pid").and_then(Value::as_u64),
                enabled: row.get("enabled").and_then(Value::as_bool).unwrap_or(false),
                action_count: row.get("actionCount").and_then(Value::as_u64),
                endpoint: row.get("endpoint").and_then(Value::as_str).map(PathBuf::from),
                running: row.get("running").and_then(Value::as_bool).unwrap_or(true),
            })
        })
        .collect()
}

impl jfgui_proto::resolve::Candidate for AppEntry {
    fn slug(&self) -> &str {
        &self.slug
    }
    fn display_name(&self) -> &str {
        &self.display_name
    }
    /// An installed app that is not running resolves like an enabled one: naming it starts it.
    fn enabled(&self) -> bool {
        self.enabled || !self.running
    }
}

/// Picks the app `query` names: exact slug, exact display name, unique prefix of an enabled
/// app's slug, in that order (proto's rule, shared with the all-apps MCP server).
pub fn resolve<'a>(query: &str, apps: &'a [AppEntry]) -> Result<&'a AppEntry, Failure> {
    use jfgui_proto::resolve::Resolved;
    match jfgui_proto::resolve::resolve(query, apps) {
        Resolved::One(app) => Ok(app),
        Resolved::Disabled(one) => Err(Failure::new(
            Exit::NotFound,
            "endpoint_disabled",
            format!(
                "app '{}' ({}) is connected but not enabled, so it has no endpoint",
                one.slug, one.display_name
            ),
        )),
        Resolved::Ambiguous(many) => Err(ambiguous(query, &many)),
        Resolved::None => {
            let enabled: Vec<&AppEntry> = apps.iter().filter(|a| a.enabled).collect();
            let message = if enabled.is_empty() {
                format!("no endpoint matches '{query}': no app endpoint is enabled")
            } else {
                format!("no endpoint matches '{query}'; candidates: {}", candidates(&enabled))
            };
            let near =
                jfgui_proto::resolve::nearest(query, enabled.iter().map(|a| a.slug.as_str()));
            Err(Failure::new(Exit::NotFound, "endpoint_not_found", message)
                .with_suggestions(near.into_iter().map(str::to_owned).collect()))
        }
    }
}

fn ambiguous(query: &str, many: &[&AppEntry]) -> Failure {
    Failure::new(
        Exit::NotFound,
        "endpoint_ambiguous",
        format!("endpoint '{query}' is ambiguous; candidates: {}", candidates(many)),
    )
}

fn candidates(apps: &[&AppEntry]) -> String {
    apps.iter().map(|a| format!("{} ({})", a.slug, a.display_name)).collect::<Vec<_>>().join(", ")
}

/// Most apps asked per `apps/list` page (the daemon's largest page).
const APPS_PAGE: u64 = 100;

/// The whole `apps/list`: every page, following `nextCursor`, as one result `{apps}`.
pub async fn request_all_apps(control: &mut Client) -> Result<Map, Failure> {
    let mut apps = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut params = Map::new();
        params.insert("limit", APPS_PAGE);
        if let Some(c) = cursor.take() {
            params.insert("cursor", c);
        }
        let mut page = control.request("apps/list", params).await?;
        match page.remove("apps") {
            Some(Value::Array(rows)) => apps.extend(rows),
            _ => {
                let message = "apps/list answered without an `apps` array";
                return Err(Failure::new(Exit::Protocol, "malformed_response", message));
            }
        }
        match page.remove("nextCursor") {
            Some(Value::String(next)) => cursor = Some(next),
            _ => break,
        }
    }
    let mut result = Map::new();
    result.insert("apps", Value::Array(apps));
    Ok(result)
}

/// Asks the daemon for its apps.
pub async fn list_apps(daemon: &Daemon, timeout: Duration) -> Result<Vec<AppEntry>, Failure> {
    let mut control = Client::connect(daemon.control(), Peer::Control, timeout).await?;
    parse_apps(&request_all_apps(&mut control).await?)
}

/// Opens the endpoint `query` names. A slug-shaped name whose socket (or pipe) exists is used
/// directly (no control round trip: the MCP SDK may start the gateway just for one probe);
/// anything else is resolved through `apps/list`. An installed app that is not running is
/// started first (`apps/activate`) when `activate`, else refused (exit 3, `app_not_running`).
pub async fn open(
    daemon: &Daemon,
    query: &str,
    timeout: Duration,
    activate: bool,
) -> Result<(String, (Reader, Writer)), Failure> {
    if is_slug_shaped(query)
        && let Ok(stream) = transport::connect(&daemon.endpoint(query)).await
    {
        return Ok((query.to_string(), stream));
    }
    let mut control = Client::connect(daemon.control(), Peer::Control, timeout).await?;
    let apps = parse_apps(&request_all_apps(&mut control).await?)?;
    let app = resolve(query, &apps)?;
    let (slug, endpoint) = if app.running {
        (app.slug.clone(), app.endpoint.clone())
    } else if activate {
        start(&mut control, &app.slug).await?
    } else {
        return Err(Failure::new(
            Exit::NotFound,
            "app_not_running",
            format!(
                "app '{}' ({}) is installed but not running, and --no-activate was given",
                app.slug, app.display_name
            ),
        ));
    };
    let path = endpoint.unwrap_or_else(|| daemon.endpoint(&slug));
    let peer = Peer::Endpoint(slug.clone());
    let stream = connect_stream(&path, &peer).await?;
    Ok((slug, stream))
}

/// `apps/activate {app}`: the daemon starts the installed app and answers once it registered
/// with access on; its slug and endpoint.
async fn start(control: &mut Client, slug: &str) -> Result<(String, Option<PathBuf>), Failure> {
    let mut params = Map::new();
    params.insert("app", slug);
    let result = control.request("apps/activate", params).await?;
    let slug = result.get("app").and_then(Value::as_str).ok_or_else(|| {
        Failure::new(Exit::Protocol, "malformed_response", "apps/activate answered without app")
    })?;
    let endpoint = result.get("endpoint").and_then(Value::as_str).map(PathBuf::from);
    Ok((slug.to_string(), endpoint))
}

/// Opens a request client to the endpoint `query` names (see [`open`]).
pub async fn client(
    daemon: &Daemon,
    query: &str,
    timeout: Duration,
    activate: bool,
) -> Result<Client, Failure> {
    let (slug, stream) = open(daemon, query, timeout, activate).await?;
    Ok(Client::from_stream(stream, Peer::Endpoint(slug), timeout))
}

/// Slugs are ASCII letters, digits and `-` (the daemon derives them so), which also keeps the name from escaping
/// `apps/`.
fn is_slug_shaped(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 48
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(slug: &str, name: &str, enabled: bool) -> AppEntry {
        AppEntry {
            slug: slug.into(),
            display_name: name.into(),
            pid: Some(1),
            enabled,
            action_count: Some(3),
            endpoint: enabled.then(|| PathBuf::from(format!("/rt/apps/{slug}.sock"))),
            running: true,
        }
    }

    fn apps() -> Vec<AppEntry> {
        vec![
            app("notepad", "Notepad", true),
            app("notepad-2", "Notepad", true),
            app("paint", "notepad-2", true),
            app("sketch-book", "Sketch Book ✏", true),
            app("hidden", "Hidden", false),
        ]
    }

    #[test]
    fn exact_slug_wins_over_display_name_and_prefix() {
        let apps = apps();
        assert_eq!(resolve("notepad", &apps).unwrap().slug, "notepad");
        // "notepad-2" is both a slug and another app's display name: the slug wins.
        assert_eq!(resolve("notepad-2", &apps).unwrap().slug, "notepad-2");
    }

    #[test]
    fn display_name_then_unique_prefix() {
        let apps = apps();
        assert_eq!(resolve("Sketch Book ✏", &apps).unwrap().slug, "sketch-book");
        assert_eq!(resolve("sk", &apps).unwrap().slug, "sketch-book");
        assert_eq!(resolve("pa", &apps).unwrap().slug, "paint");
    }

    #[test]
    fn ambiguous_and_unknown_list_candidates_with_exit_3() {
        let apps = apps();
        let e = resolve("Notepad", &apps).unwrap_err();
        assert_eq!((e.exit, e.reason.as_str()), (Exit::NotFound, "endpoint_ambiguous"));
        assert!(
            e.message.contains("notepad (Notepad)") && e.message.contains("notepad-2 (Notepad)")
        );
        let e = resolve("note", &apps).unwrap_err();
        assert_eq!(e.reason, "endpoint_ambiguous");
        let e = resolve("zzz", &apps).unwrap_err();
        assert_eq!((e.exit, e.reason.as_str()), (Exit::NotFound, "endpoint_not_found"));
        assert!(e.message.contains("paint (notepad-2)"));
        assert!(!e.message.contains("hidden"), "disabled apps are no candidates: {}", e.message);
        let e = resolve("x", &[]).unwrap_err();
        assert!(e.message.contains("no app endpoint is enabled"));
        // A misspelled name gets the nearest enabled ones.
        let e = resolve("notepd", &apps).unwrap_err();
        assert_eq!(*e.suggestions, ["notepad"]);
        assert!(e.message.ends_with("; did you mean notepad?"), "{}", e.message);
    }

    #[test]
    fn disabled_apps_are_named_but_not_reachable() {
        let apps = apps();
        let e = resolve("hidden", &apps).unwrap_err();
        assert_eq!((e.exit, e.reason.as_str()), (Exit::NotFound, "endpoint_disabled"));
        assert_eq!(resolve("hid", &apps).unwrap_err().reason, "endpoint_not_found");
    }

    #[test]
    fn slug_shape_keeps_names_inside_apps_dir() {
        assert!(is_slug_shaped("notepad-2"));
        for bad in ["", "../agentd", "Notepad", "a/b", "a.sock", &"x".repeat(49)] {
            assert!(!is_slug_shaped(bad), "{bad}");
        }
    }
}
