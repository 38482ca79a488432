//! The client side: the connections of clients (per-app endpoints, the all-apps MCP socket,
//! the control socket) and the protocols they speak. It uses the app side (`app/`) through
//! [`App`] and the floor below both (task records, audit log, partial-input budget); nothing
//! below imports it.
//!
//! | part | file |
//! |---|---|
//! | the one line loop every client socket runs | `client/connection.rs` |
//! | what a connection's next request waits for (in-flight slots, response budget) | `client/backpressure.rs` |
//! | the calls waiting for an app, polled by the connection's own task | `client/running.rs` |
//! | bounded lines with the partial-line deadline | `client/lines.rs` |
//! | one app's endpoint: JSON-1 or MCP | `client/endpoint.rs`, `client/select.rs` |
//! | JSON control protocol 1 on the wire | `client/json1.rs` |
//! | MCP: both revisions, the nine tools, resources, the all-apps server | `client/mcp.rs`, `client/mcp/` |
//! | the ten methods, once for both protocols | `client/methods.rs`, `client/method.rs` |
//! | what the audit log sees of a call | `client/observer.rs` |
//! | the control socket | `client/control.rs`, `client/control/` |
//! | the rate limit of the warnings a client can cause | `client/peer_warnings.rs` |

mod backpressure;
mod connection;
mod control;
mod endpoint;
pub mod json1;
pub(crate) mod lines;
mod mcp;
mod method;
mod methods;
mod observer;
mod peer_warnings;
mod running;
pub(crate) mod select;

pub(crate) use control::serve as serve_control;
pub use control::{ControlError, ControlMethods};
pub(crate) use endpoint::serve as serve_endpoint;
pub(crate) use mcp::serve_all_apps;
pub use mcp::{OfflineMcp, drop_non_mcp_error_id, is_mcp_request_id, mcp_error_line};
pub(crate) use observer::{Caller, ClientFate};

use std::sync::Arc;

use crate::app::App;
use crate::audit::{ClientInfo, Protocol};
use crate::consent::Asker;

/// The app a client's calls go to, and who calls (when calls are audited). Cheap to clone.
#[derive(Clone, Debug)]
pub struct Target {
    app: App,
    /// Who calls, when calls are audited (`observer.rs`).
    caller: Option<Caller>,
    /// The agent behind the connection (consent).
    asker: Arc<Asker>,
    /// What the client says it is (MCP `clientInfo`), shown beside the agent, never matched.
    says: Option<Arc<ClientInfo>>,
}

impl Target {
    /// `app` called by `caller` (`None`: calls are not audited).
    pub(crate) fn new(app: App, caller: Option<Caller>, asker: Arc<Asker>) -> Target {
        Target { app, caller, asker, says: None }
    }

    /// The agent behind the connection.
    pub(crate) fn asker(&self) -> &Arc<Asker> {
        &self.asker
    }

    /// What the client says it is.
    pub(crate) fn says(&self) -> Option<&ClientInfo> {
        self.says.as_deref()
    }

    /// The app.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// Who calls, when calls are audited.
    pub(crate) fn caller(&self) -> Option<&Caller> {
        self.caller.as_ref()
    }

    /// The same target, called in `protocol` (MCP sets the revision and `clientInfo` per
    /// request).
    pub(crate) fn speaking(mut self, protocol: &Protocol) -> Target {
        if let Protocol::Mcp { client_info, .. } = protocol {
            self.says = client_info.clone();
        }
        self.caller = self.caller.map(|c| c.speaking(protocol.clone()));
        self
    }
}
