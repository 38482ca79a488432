//! `jfgui-agent`: the command line for people and scripts.

fn main() {}
