//! The five bounds of strict JSON, enforced while parsing and while encoding.

/// Bounds on one JSON message. Every field is enforced *during* parsing, so an over-bound input
/// is refused before it costs more than the bound itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Encoded size of the whole message in bytes (default 1 MiB, the bound of a client line).
    pub max_bytes: usize,
    /// Nesting depth: the number of open arrays/objects at once (default 32). The top-level
    /// object counts as depth 1.
    pub max_depth: usize,
    /// Total number of values, containers and scalars alike, the top-level one included
    /// (default 16384).
    pub max_values: usize,
    /// Elements of one array or members of one object (default 4096).
    pub max_members: usize,
    /// Decoded (UTF-8) length of one string, object keys included, in bytes (default 256 KiB).
    pub max_string_bytes: usize,
}

impl Limits {
    /// The defaults: 1 MiB, depth 32, 16384 values, 4096 members, 256 KiB per string.
    pub const DEFAULT: Limits = Limits {
        max_bytes: 1024 * 1024,
        max_depth: 32,
        max_values: 16384,
        max_members: 4096,
        max_string_bytes: 256 * 1024,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
