//! Partial store order: as TSO, but stores to different locations may reach memory out of order;
//! `sfence` keeps earlier stores before later ones.

use super::axioms::{self, Preserved};
use super::{buffered_conflicts, BufferKind, Model};
use crate::event::Event;
use crate::graph::Graph;

pub struct Pso {
    pub bound: Option<usize>,
}

impl Model for Pso {
    fn name(&self) -> &'static str {
        "pso"
    }

    fn conflicts(&self, a: &Event, b: &Event) -> bool {
        buffered_conflicts(a, b)
    }

    fn consistent(&self, g: &Graph) -> bool {
        axioms::consistent(g, Preserved::FromReads)
    }

    fn preserved(&self) -> Option<Preserved> {
        Some(Preserved::FromReads)
    }

    fn fences_visible(&self) -> bool {
        true
    }

    fn buffers(&self) -> Option<(BufferKind, Option<usize>)> {
        Some((BufferKind::PerLocation, self.bound))
    }
}
