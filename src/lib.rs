//! smc-run: a stateless model checker for compiled concurrent programs.
//! See ARCHITECTURE.md for the map of the parts.

pub mod engine;
pub mod event;
pub mod model;
pub mod channel;
pub mod decode;
pub mod program;
#[path = "../targets/mod.rs"]
pub mod targets;
pub mod instrument;
pub mod target;
pub mod report;
