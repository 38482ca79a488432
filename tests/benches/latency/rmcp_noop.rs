//! The MCP baseline: an rmcp stdio server (the official Rust SDK) answering a no-op tool
//! directly, 1 hop. Like the daemon it runs a current-thread tokio runtime; it is this binary
//! as a middle child (`middle.rs`), so its allocations are counted.

use std::borrow::Cow;
use std::io;
use std::sync::Arc;

use jfgui_tests::serde_json::{self, json};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::load::{Client, Target};
use crate::mcp::{Session, SessionClient, next_log, tools_call};
use crate::middle;

/// The tool's name; it answers the text `ok`.
pub const TOOL: &str = "noop";

#[derive(Debug, Clone)]
struct Noop;

impl ServerHandler for Noop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut schema = serde_json::Map::new();
        schema.insert("type".to_string(), json!("object"));
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            TOOL,
            "Does nothing.",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != Cow::Borrowed(TOOL) {
            return Err(ErrorData::invalid_params(format!("unknown tool {}", request.name), None));
        }
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text("ok")])))
    }
}

/// Child side: serves stdin/stdout until stdin closes.
pub fn serve() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let service = Noop.serve(rmcp::transport::stdio()).await.expect("rmcp initialize");
        let _ = service.waiting().await;
    });
}

/// The rmcp path: each client starts its own server.
pub struct Rmcp {
    pub dir: std::path::PathBuf,
}

impl Target for Rmcp {
    /// A server of its own, its first reply checked: one text content `ok`, no error.
    fn connect(&self) -> io::Result<Box<dyn Client>> {
        let n = next_log();
        let ctl = self.dir.join(format!("rmcp-{n}.ctl"));
        let log = self.dir.join(format!("rmcp-{n}.log"));
        let mut session = Session::start(middle::command("rmcp", &ctl), &log)?;
        let request = tools_call(TOOL, "{}");
        let reply = session.call(&request, 1)?;
        if reply.pointer("/result/content/0/text") != Some(&json!("ok"))
            || reply.pointer("/result/isError") == Some(&json!(true))
            || reply.pointer("/result/content/1").is_some()
        {
            return Err(io::Error::other(format!("rmcp tools/call reply {reply}")));
        }
        let template = session.last_reply(1);
        let pid = session.pid();
        Ok(Box::new(SessionClient {
            session,
            request,
            reply: template,
            own_pids: vec![pid],
            ctl: Some(ctl),
        }))
    }

    fn middle_pids(&self) -> Vec<u32> {
        Vec::new()
    }

    /// No shared middle: the servers count their own.
    fn allocations(&self) -> Option<u64> {
        Some(0)
    }
}
