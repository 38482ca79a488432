//! The call every path makes and the answer it must get: Notepad's `document.get` of a
//! document of 64 B or 4 KiB, built here independently of the daemon so the daemon's replies
//! are checked, not just copied; the relays and D-Bus answer with the same bytes.

use jfgui_tests::serde_json::{Value, json};

use crate::line::Template;

/// The document sizes measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    B64,
    K4,
}

impl Size {
    pub const ALL: [Size; 2] = [Size::B64, Size::K4];

    /// Document length in bytes.
    pub fn bytes(self) -> usize {
        match self {
            Size::B64 => 64,
            Size::K4 => 4096,
        }
    }

    /// For tables.
    pub fn label(self) -> &'static str {
        match self {
            Size::B64 => "64 B",
            Size::K4 => "4 KiB",
        }
    }

    /// For file and app names.
    pub fn tag(self) -> &'static str {
        match self {
            Size::B64 => "b64",
            Size::K4 => "k4",
        }
    }

    /// The document: ASCII letters, nothing to escape, so the reply carries exactly this many
    /// text bytes.
    pub fn text(self) -> String {
        (0..self.bytes()).map(|i| char::from(b'a' + (i % 26) as u8)).collect()
    }

    /// What `document.get` returns on a fresh Notepad holding [`Size::text`], in either
    /// protocol (MCP's `structuredContent`): the output (text, length in characters, caret at
    /// the end after `--text`) and the revision.
    pub fn result(self) -> Value {
        let n = self.bytes();
        json!({
            "output": {"text": self.text(), "length": n, "selection": {"start": n, "end": n}},
            "revision": 1,
        })
    }
}

impl Size {
    /// The `result` of the JSON-1 reply: [`Size::result`] and the protocol version.
    pub fn json1_result(self) -> Value {
        let mut result = self.result();
        result["protocolVersion"] = json!("1");
        result
    }
}

/// The JSON-1 request of every JSON-RPC line path.
pub fn execute_request() -> Template {
    Template::new(|id| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"actions/execute","params":{{"action":"document.get"}}}}"#
        )
    })
}
