//! smc-run: a stateless model checker for compiled concurrent programs.
//! See ARCHITECTURE.md for the map of the parts.

pub mod channel;
pub mod decode;
pub mod engine;
pub mod event;
pub mod graph;
pub mod instrument;
pub mod litmus;
pub mod model;
pub mod program;
pub mod report;
pub mod results;
pub mod site;
pub mod supervisor;
#[path = "../targets/mod.rs"]
pub mod targets;
