//! `json_check FILE`: parses one file with the default bounds (1 MiB, depth 32,
//! 16384 values, 4096 members, 256 KiB strings); exit 0 when accepted,
//! 1 when rejected (the error on stderr), 2 on usage or I/O errors.

use std::process::ExitCode;

use jfgui_proto::{Limits, parse};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: json_check FILE");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("json_check: {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    match parse(&bytes, &Limits::DEFAULT) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rejected: {e} ({})", e.kind().as_str());
            ExitCode::from(1)
        }
    }
}
