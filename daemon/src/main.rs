//! `jfgui-agentd`: the per-user daemon.

fn main() {}
