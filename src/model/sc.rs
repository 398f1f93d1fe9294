//! Sequential consistency: every access reaches memory at once, in program order.

use super::axioms::{self, Preserved};
use super::Model;
use crate::event::{Event, Op};
use crate::graph::Graph;

pub struct Sc;

impl Model for Sc {
    fn name(&self) -> &'static str {
        "sc"
    }

    fn conflicts(&self, a: &Event, b: &Event) -> bool {
        // Leaving the process cuts every other thread off, so it is ordered with all of them.
        if matches!(a.op, Op::ProcessExit { .. }) || matches!(b.op, Op::ProcessExit { .. }) {
            return true;
        }
        a.footprint(false).conflicts(&b.footprint(false))
    }

    fn consistent(&self, g: &Graph) -> bool {
        axioms::consistent(g, Preserved::All)
    }

    fn preserved(&self) -> Option<Preserved> {
        Some(Preserved::All)
    }

    fn fences_visible(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Pending, TargetAddr, ThreadId};

    fn ev(t: u32, op: Op) -> Event {
        Event::from_pending(
            ThreadId(t),
            &Pending {
                op,
                pc: 0,
                hash: 0,
                site: 0,
                skipped: 0,
                cas: None,
                stores: None,
            },
        )
    }

    #[test]
    fn byte_exact_conflicts() {
        let x = |a: u64, size| Op::Store {
            addr: TargetAddr(a),
            size,
        };
        let r = |a: u64, size| Op::Load {
            addr: TargetAddr(a),
            size,
        };
        // adjacent ints do not conflict; overlapping ones do
        assert!(!Sc.conflicts(&ev(1, x(0x1000, 4)), &ev(2, x(0x1004, 4))));
        assert!(Sc.conflicts(&ev(1, x(0x1000, 8)), &ev(2, r(0x1004, 1))));
        assert!(!Sc.conflicts(&ev(1, r(0x1000, 4)), &ev(2, r(0x1000, 4))));
        assert!(Sc.conflicts(
            &ev(
                1,
                Op::ProcessExit {
                    status: 0,
                    handlers: true,
                },
            ),
            &ev(2, Op::Yield)
        ));
    }

    #[test]
    fn failed_cas_is_a_read() {
        let cas = Op::Cas {
            addr: TargetAddr(0x10),
            size: 4,
        };
        let mut a = ev(1, cas);
        a.wrote = false;
        let b = ev(
            2,
            Op::Load {
                addr: TargetAddr(0x10),
                size: 4,
            },
        );
        assert!(!Sc.conflicts(&a, &b));
        a.wrote = true;
        assert!(Sc.conflicts(&a, &b));
    }
}
