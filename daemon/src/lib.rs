//! The jfgui-agentd daemon and its session engine.

mod session;
