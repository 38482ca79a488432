//! `jfgui-notepad`: a GUI-less model of a text editor that registers with jfgui-agentd.

fn main() {}
