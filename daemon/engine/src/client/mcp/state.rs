//! The MCP state of one connection and what each of its messages is: inside MCP every message
//! is classified on its own (`docs/PROTOCOL.md`, "Selection (per connection, sticky)"):
//! `initialize` → the legacy handshake; the modern `_meta` envelope → 2026-07-28, statelessly
//! (it never inherits legacy state); `ping` → `{}`; after a legacy `initialize` → 2025-11-25;
//! anything else → -32602 naming both ways in.
//!
//! An MCP request id is a string or an integer (both official schemas); a request with any
//! other id (null, 1.5, an object, ...) gets -32600 without the id echoed.

use std::sync::Arc;

use jfgui_proto::{Map, Value};

use super::backend::Backend;
use super::cancel::{CancelOutcome, InFlight, Ticket};
use super::legacy::{self, LegacyState};
use super::modern::{self, Cache};
use super::resources::{self, NotFoundCode};
use super::rpc::{
    INVALID_REQUEST, IdKey, Incoming, METHOD_NOT_FOUND, Reply, RpcError, invalid_id, object,
};
use super::tools;
use crate::audit::{ClientInfo, Protocol};

/// What to do with one MCP message.
#[derive(Debug)]
pub(crate) enum Route {
    /// Write this reply now.
    Answer(Reply),
    /// Run this request against the app, then write what it yields.
    Run(Pending),
    /// Nothing to do (a notification, or a response sent by the client).
    Silent,
}

/// MCP state of one connection.
#[derive(Debug, Default)]
pub(crate) struct McpState {
    legacy: LegacyState,
    in_flight: InFlight,
    /// The `clientInfo` of the accepted `initialize` (legacy requests are audited with it).
    client_info: Option<Arc<ClientInfo>>,
}

/// The revision a request is served under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    Modern,
    Legacy,
}

/// An accepted MCP request waiting for the app.
#[derive(Debug)]
pub(crate) struct Pending {
    ticket: Ticket,
    work: Work,
    /// The revision and client the request came with, for the audit log.
    protocol: Protocol,
}

#[derive(Debug)]
enum Work {
    Discover,
    Initialize,
    ToolsList(Era),
    ToolsCall(Era, Map),
    ResourcesList(Era, Option<Map>),
    ResourceTemplates(Era, Option<Map>),
    ResourcesRead(Era, Option<Map>),
}

impl McpState {
    /// What `msg` is, updating the state (see the module docs).
    pub(crate) fn accept(&mut self, msg: &Incoming<'_>) -> Route {
        let Some(method) = msg.method else {
            tracing::debug!("ignoring a JSON-RPC response from the MCP client");
            return Route::Silent;
        };
        let Some(id) = msg.id else {
            self.notification(method, msg.params);
            return Route::Silent;
        };
        let Some(key) = IdKey::of(id) else {
            return Route::Answer(Err(invalid_id(id)));
        };
        // 2026-07-28 has no `initialize`: one in the modern form (the envelope, no
        // `params.protocolVersion`) is a modern request for a method the revision lacks.
        if method == "initialize" && !modern_initialize(msg.params) {
            return match legacy::check_initialize(msg.params) {
                Ok((offered, info)) => {
                    if offered != legacy::LEGACY_VERSION {
                        tracing::info!(
                            offered,
                            "initialize: counteroffering {}",
                            legacy::LEGACY_VERSION
                        );
                    }
                    self.legacy.initialized = true;
                    self.client_info = Some(Arc::new(info));
                    let protocol = self.legacy_protocol();
                    self.pending(key, Work::Initialize, protocol)
                }
                Err(e) => Route::Answer(Err(e)),
            };
        }
        if modern::has_envelope(msg.params) {
            let params = msg.params_object().cloned().unwrap_or_default();
            if let Err(e) = modern::check_envelope(&params) {
                return Route::Answer(Err(e));
            }
            let protocol = Protocol::Mcp {
                revision: modern::MODERN_VERSION,
                client_info: modern::client_info(&params).map(Arc::new),
            };
            let work = match method {
                "server/discover" => Work::Discover,
                "tools/list" => match no_cursor(&params, method) {
                    Ok(()) => Work::ToolsList(Era::Modern),
                    Err(e) => return Route::Answer(Err(e)),
                },
                "tools/call" => Work::ToolsCall(Era::Modern, params),
                "resources/list" => Work::ResourcesList(Era::Modern, Some(params)),
                "resources/templates/list" => Work::ResourceTemplates(Era::Modern, Some(params)),
                "resources/read" => Work::ResourcesRead(Era::Modern, Some(params)),
                _ => return Route::Answer(Err(not_in_revision(method, modern::MODERN_VERSION))),
            };
            return self.pending(key, work, protocol);
        }
        if method == "ping" {
            return Route::Answer(Ok(Map::new().into()));
        }
        if !self.legacy.initialized {
            return Route::Answer(Err(modern::no_way_in(method)));
        }
        let params = match msg.params {
            None => None,
            Some(Value::Object(p)) => Some(p.clone()),
            Some(other) => {
                return Route::Answer(Err(RpcError::invalid_params(
                    "invalid_params",
                    format!(
                        "Invalid params: {method} params must be an object, not {}.",
                        other.type_name()
                    ),
                )));
            }
        };
        let work = match method {
            "tools/list" => match no_cursor(params.as_ref().unwrap_or(&Map::new()), method) {
                Ok(()) => Work::ToolsList(Era::Legacy),
                Err(e) => return Route::Answer(Err(e)),
            },
            "tools/call" => Work::ToolsCall(Era::Legacy, params.unwrap_or_default()),
            "resources/list" => Work::ResourcesList(Era::Legacy, params),
            "resources/templates/list" => Work::ResourceTemplates(Era::Legacy, params),
            "resources/read" => Work::ResourcesRead(Era::Legacy, params),
            _ => return Route::Answer(Err(not_in_revision(method, legacy::LEGACY_VERSION))),
        };
        let protocol = self.legacy_protocol();
        self.pending(key, work, protocol)
    }

    fn legacy_protocol(&self) -> Protocol {
        Protocol::Mcp { revision: legacy::LEGACY_VERSION, client_info: self.client_info.clone() }
    }

    fn pending(&mut self, key: IdKey, work: Work, protocol: Protocol) -> Route {
        match self.in_flight.begin(key) {
            Some(ticket) => Route::Run(Pending { ticket, work, protocol }),
            None => Route::Answer(Err(RpcError::with_data(
                INVALID_REQUEST,
                "Invalid request: this id belongs to a request still in flight; ids must not be reused until answered.",
                object([("reason", "duplicate_id".into())]),
            ))),
        }
    }

    fn notification(&mut self, method: &str, params: Option<&Value>) {
        match method {
            "notifications/initialized" => {
                // Nothing waits for it: stdio keeps order, and requests are already served
                // once `initialize` is accepted.
                if !self.legacy.initialized {
                    tracing::debug!("notifications/initialized before initialize; ignored");
                }
            }
            "notifications/cancelled" => {
                let request = params.and_then(|p| p.get("requestId"));
                let reason = params.and_then(|p| p.get("reason")).and_then(Value::as_str);
                match request.and_then(IdKey::of) {
                    Some(key) => match self.in_flight.cancel(&key) {
                        CancelOutcome::Suppressed => tracing::info!(
                            request = %key,
                            reason,
                            "MCP client cancelled a request in flight: the host call runs on, its response is suppressed"
                        ),
                        CancelOutcome::NotInFlight => tracing::debug!(
                            request = %key,
                            "cancellation of a request not in flight has no effect"
                        ),
                    },
                    None => tracing::debug!(
                        "notifications/cancelled without a usable requestId; ignored"
                    ),
                }
            }
            _ => tracing::debug!(method, "ignoring MCP notification"),
        }
    }

    /// Requests in flight (for tests).
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

impl Pending {
    /// Answered without a round trip to the app (the tool list, a local tool): the connection
    /// runs it on its own task, one at a time (fairness, `client/connection.rs`).
    pub fn is_local(&self) -> bool {
        match &self.work {
            Work::ToolsList(_) => true,
            Work::ToolsCall(_, params) => tools::is_local(params),
            _ => false,
        }
    }

    /// The protocol revision and client of this request (for the audit log).
    pub fn protocol(&self) -> &Protocol {
        &self.protocol
    }

    /// Serves the request. `None` means the client cancelled it meanwhile: nothing may be sent.
    pub async fn run<B: Backend>(self, app: &B) -> Option<Reply> {
        let reply = serve(app, self.work).await;
        let key = self.ticket.key().clone();
        if self.ticket.finish() {
            Some(reply)
        } else {
            tracing::info!(request = %key, ok = reply.is_ok(), "suppressed the response of a cancelled MCP request");
            None
        }
    }
}

async fn serve<B: Backend>(app: &B, work: Work) -> Reply {
    let name = app.display_name();
    let (era, cache, result) = match work {
        Work::Discover => {
            let caps = resources::capabilities(resources::host_lists_resources(app).await?);
            (Era::Modern, Cache::List, modern::discover(caps, app.instructions()).into())
        }
        Work::Initialize => {
            let caps = resources::capabilities(resources::host_lists_resources(app).await?);
            let result =
                legacy::initialize_result(caps, modern::server_info(&name), app.instructions());
            (Era::Legacy, Cache::None, result.into())
        }
        Work::ToolsList(era) => {
            let tools = Value::Array(app.tool_list().to_vec());
            (era, Cache::List, object([("tools", tools)]).into())
        }
        Work::ToolsCall(era, params) => (era, Cache::None, tools::call(app, &params).await?),
        Work::ResourcesList(era, params) => {
            (era, Cache::Resource, resources::list(app, params.as_ref()).await?.into())
        }
        Work::ResourceTemplates(era, params) => {
            (era, Cache::Resource, resources::templates(app, params.as_ref()).await?.into())
        }
        Work::ResourcesRead(era, params) => {
            let not_found = match era {
                Era::Modern => NotFoundCode::InvalidParams,
                Era::Legacy => NotFoundCode::ResourceNotFound,
            };
            let result = resources::read(app, params.as_ref(), not_found).await?;
            (era, Cache::Resource, result.into())
        }
    };
    Ok(match era {
        Era::Modern => modern::finish(result, &name, cache),
        Era::Legacy => result,
    })
}

/// An `initialize` in the 2026-07-28 form: the `_meta` envelope without the legacy
/// `params.protocolVersion`.
fn modern_initialize(params: Option<&Value>) -> bool {
    modern::has_envelope(params) && params.and_then(|p| p.get("protocolVersion")).is_none()
}

fn no_cursor(params: &Map, method: &str) -> Result<(), RpcError> {
    match params.get("cursor") {
        None => Ok(()),
        Some(_) => Err(RpcError::invalid_params(
            "invalid_cursor",
            format!("Invalid params: {method} has a single page, so no cursor is valid."),
        )),
    }
}

fn not_in_revision(method: &str, version: &str) -> RpcError {
    RpcError::with_data(
        METHOD_NOT_FOUND,
        format!("Method not found: this server does not offer {method} in MCP {version}."),
        object([("method", method.into())]),
    )
}
