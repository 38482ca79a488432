//! The consent part of the host channel (docs/PROTOCOL.md, "Consent"): who asks, sent with a
//! call of a `confirm` action ([`Consent`], [`Agent`]); how a waiting call shows in its task
//! ([`Awaiting`]) and how it was decided ([`ConsentDecision`]); and the daemon taking a prompt
//! back ([`Withdraw`]).

use alloc::string::String;

use serde::{Deserialize, Serialize};

/// `consent{agent, granted?, mayGrant}`: sent by the daemon with an `execute` or `batch` call
/// only when the call (or a call of the batch) names a `confirm` action, so every other frame
/// keeps its shape. A call of a `confirm` action without it (an older daemon) is treated as
/// "no grant, unknown agent": the app asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Consent {
    /// Who is calling, as the daemon established it from the operating system.
    pub agent: Agent,
    /// The id of the user's standing grant that covers this call: the app runs it without
    /// asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted: Option<u64>,
    /// Whether the prompt may offer "always allow" (the daemon can record a grant for this
    /// agent).
    pub may_grant: bool,
}

/// `agent{exe, pid?, says?, transport}`: the calling agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Agent {
    /// The agent's executable path, taken from the operating system (or `bridge client` for
    /// a caller of the browser bridge's `/rpc`).
    pub exe: String,
    /// Its process id, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// What the client says it is (MCP `clientInfo` name and version): shown as "says it is",
    /// never used to decide anything, since any client can say anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub says: Option<String>,
    /// How it came: `endpoint`, `all-apps-mcp`, `bridge`, `headless`, as the audit names it.
    pub transport: String,
}

impl Agent {
    /// The last component of [`Agent::exe`] (the whole of it when it has no `/` or `\`): the
    /// short name a prompt's buttons use ("Always allow claude").
    ///
    /// ```
    /// # use jfgui_proto::channel::Agent;
    /// let agent = Agent { exe: "/usr/bin/claude".into(), pid: None, says: None, transport: "endpoint".into() };
    /// assert_eq!(agent.short_name(), "claude");
    /// ```
    pub fn short_name(&self) -> &str {
        let name = self.exe.rsplit(['/', '\\']).next().unwrap_or(&self.exe);
        if name.is_empty() { &self.exe } else { name }
    }
}

/// What a running task waits for: `awaiting: "confirmation"` while the user has not answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Awaiting {
    /// The user's answer to a prompt; nothing of the call has run.
    Confirmation,
}

/// `consent{answer}` of a task that waited for the user: how it was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConsentDecision {
    /// The answer.
    pub answer: ConsentAnswer,
}

/// How a prompt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsentAnswer {
    /// The user allowed this call.
    Allow,
    /// The user allowed this call and every later one of this action by this agent: the
    /// daemon records a grant for the agent *it* saw calling (the app names none).
    AllowAlways,
    /// The user said no: `not_executed/denied_by_user`.
    Deny,
    /// Nobody answered in time: `not_executed/confirmation_timeout`.
    Timeout,
    /// The call was cancelled (`tasks/cancel`, or its client went away) while it waited.
    Cancelled,
    /// The app has no way to ask: `not_executed/no_confirmation_ui`.
    NoUi,
}

impl ConsentAnswer {
    /// The wire name, e.g. `"allow_always"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConsentAnswer::Allow => "allow",
            ConsentAnswer::AllowAlways => "allow_always",
            ConsentAnswer::Deny => "deny",
            ConsentAnswer::Timeout => "timeout",
            ConsentAnswer::Cancelled => "cancelled",
            ConsentAnswer::NoUi => "no_ui",
        }
    }
}

/// `withdraw{task, reason}`: the daemon takes a waiting prompt back. The app withdraws the
/// prompt if its task still waits (else the message is ignored) and ends the task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Withdraw {
    /// The waiting task (the prompt's ticket).
    pub task: String,
    /// Why.
    pub reason: WithdrawReason,
}

/// Why the daemon withdrew a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WithdrawReason {
    /// Nobody answered within the daemon's confirmation deadline: the task fails
    /// `not_executed/confirmation_timeout`.
    ConfirmationTimeout,
    /// The client that made the call went away: the task ends `cancelled`.
    ClientGone,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(exe: &str) -> Agent {
        Agent { exe: exe.into(), pid: None, says: None, transport: "endpoint".into() }
    }

    #[test]
    fn short_names() {
        assert_eq!(agent("/usr/bin/claude").short_name(), "claude");
        assert_eq!(agent(r"C:\Tools\agent.exe").short_name(), "agent.exe");
        assert_eq!(agent("bridge client").short_name(), "bridge client");
        assert_eq!(agent("/odd/").short_name(), "/odd/");
    }

    #[test]
    fn answer_names_are_the_wire_names() {
        for a in [
            ConsentAnswer::Allow,
            ConsentAnswer::AllowAlways,
            ConsentAnswer::Deny,
            ConsentAnswer::Timeout,
            ConsentAnswer::Cancelled,
            ConsentAnswer::NoUi,
        ] {
            assert_eq!(crate::to_value(&a).unwrap(), crate::Value::from(a.as_str()));
        }
    }
}
