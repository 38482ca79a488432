//! Client sessions: the protocols spoken on an app's endpoint.

pub(crate) mod mcp;
