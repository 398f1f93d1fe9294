//! Total store order (x86): each thread's stores wait in one FIFO buffer; a load sees its own
//! buffer first. Explored over chronological traces (Abdulla et al., TACAS 2015).

use super::axioms::{self, Preserved};
use super::{buffered_conflicts, BufferKind, Model};
use crate::event::Event;
use crate::graph::Graph;

pub struct Tso {
    pub bound: Option<usize>,
}

impl Model for Tso {
    fn name(&self) -> &'static str {
        "tso"
    }

    fn conflicts(&self, a: &Event, b: &Event) -> bool {
        buffered_conflicts(a, b)
    }

    fn consistent(&self, g: &Graph) -> bool {
        axioms::consistent(g, Preserved::AllButWriteRead)
    }

    fn preserved(&self) -> Option<Preserved> {
        Some(Preserved::AllButWriteRead)
    }

    fn fences_visible(&self) -> bool {
        true
    }

    fn buffers(&self) -> Option<(BufferKind, Option<usize>)> {
        Some((BufferKind::Fifo, self.bound))
    }
}
