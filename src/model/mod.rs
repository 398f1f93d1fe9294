//! Memory models: which events conflict, so the engine knows which orders to explore.
//! One file per model; the engine reaches them only through [`Model`].

mod sc;

pub use sc::Sc;

use crate::event::Event;

/// What the engine needs of a memory model.
pub trait Model {
    /// Name as given on the command line.
    fn name(&self) -> &'static str;
    /// Do two events of different threads conflict (their order can change the outcome)?
    fn conflicts(&self, a: &Event, b: &Event) -> bool;
    /// Are fences visible events under this model?
    fn fences_visible(&self) -> bool;
}

/// The models this build supports, by command-line name.
pub fn by_name(name: &str) -> Option<Box<dyn Model>> {
    match name {
        "sc" => Some(Box::new(Sc)),
        _ => None,
    }
}

pub const MODEL_NAMES: &[&str] = &["sc"];
