//! Compare-exchanges: an update where the write it reads from holds what it compares with,
//! else a read. Where the runtime reports its operands ([`crate::event::CasOperands`]), the
//! engine knows which before it chooses a source, so each source's graph is made with the
//! right label, the update's bytes known (what it writes does not depend on what it read). Without them
//! (a 16-byte one), it is added as a read and becomes an update once it has run and written
//! (`Trust::settle_converted`), which may end an execution blocked.

use crate::event::StoreBytes;
use crate::graph::{EventId, Graph, Label, Order};

use super::revisit::{sources_taken, Placed};
use super::Trust;

/// The first `size` bytes of `v`, as a write leaves them in memory (little-endian).
pub(super) fn operand_bytes(v: u64, size: u32) -> StoreBytes {
    StoreBytes::from_slice(&v.to_le_bytes()[..(size as usize).min(8)])
}

/// `e` as an update of `g` that reads from `w` and writes `bytes`.
fn as_update(g: &mut Graph, e: EventId, w: Option<EventId>, bytes: StoreBytes) {
    if let Label::Read { addr, size, .. } | Label::Update { addr, size, .. } = *g.label(e) {
        *g.label_mut(e) = Label::Update {
            addr,
            size,
            rf: w,
            bytes,
        };
    }
}

/// A read's label from one of its sources, known before it runs.
pub(super) struct SourceLabel {
    pub source: Option<EventId>,
    /// The bytes it writes from that source (an update), or `None` (a read).
    pub write: Option<StoreBytes>,
    /// Which of its outcomes from that source (an object's operation with several).
    pub choice: Option<u32>,
}

impl Trust<'_> {
    /// The graphs of compare-exchange `e`, a read of `g` with its operands, reading from each
    /// of `candidates` (in their order) where that is consistent: an update right after a
    /// source that holds what it expects (its revisits made), a read of any other. `None`
    /// where the bytes of a source are not known (an initial value no store has written over
    /// yet in this execution): it is then added as a read.
    pub(super) fn exchange_sources(
        &mut self,
        g: &mut Graph,
        e: EventId,
        candidates: &[Option<EventId>],
    ) -> Option<Vec<Graph>> {
        let ops = g.event(e).cas?;
        let (addr, size) = g.label(e).access()?;
        let expected = operand_bytes(ops.expected, size);
        let desired = operand_bytes(ops.desired, size);
        let labels: Vec<SourceLabel> = candidates
            .iter()
            .map(|&w| {
                let bytes = match w {
                    Some(w) => g.label(w).written()?,
                    None => self.memory.before.get(&addr)?,
                };
                (bytes.len() == size as usize).then(|| SourceLabel {
                    source: w,
                    write: (*bytes == expected).then(|| desired.clone()),
                    choice: None,
                })
            })
            .collect::<Option<_>>()?;
        let order = g.event(e).order;
        Some(self.labelled_sources(g, e, &labels, order))
    }

    /// The graphs of read `e` of `g` with each of `labels` (in their order) where that is
    /// consistent: an update right after its source where it writes (its revisits made,
    /// `order` its order), a read of any other.
    pub(super) fn labelled_sources(
        &mut self,
        g: &mut Graph,
        e: EventId,
        labels: &[SourceLabel],
        order: Option<Order>,
    ) -> Vec<Graph> {
        let mut graphs = Vec::with_capacity(labels.len());
        let mut updates = Vec::new();
        // (each kind's sources checked at once where the model can)
        let sources = |writes: bool| -> Vec<Option<EventId>> {
            (labels.iter())
                .filter(|l| l.write.is_some() == writes)
                .map(|l| l.source)
                .collect()
        };
        let (read_sources, update_sources) = (sources(false), sources(true));
        let reads_ok = self.consistent_candidates(g, e, &read_sources);
        let updates_ok = self.consistent_updates(g, e, &update_sources);
        let others_read = sources_taken(g, g.label(e).location().expect("an access"));
        let (mut nth_read, mut nth_update) = (0, 0);
        for label in labels {
            let w = label.source;
            let Some(bytes) = &label.write else {
                let known = reads_ok.as_ref().map(|ok| ok[nth_read]);
                nth_read += 1;
                graphs.extend(self.source_graph(g, e, w, known));
                continue;
            };
            let known = updates_ok.as_ref().map(|ok| ok[nth_update]);
            nth_update += 1;
            if known == Some(false) && !others_read.contains(&w) {
                continue;
            }
            let mut h = g.clone();
            as_update(&mut h, e, w, bytes.clone());
            h.event_mut(e).order = order;
            if label.choice.is_some() {
                h.event_mut(e).choice = label.choice;
            }
            match self.placed_update(g, h, e, w, known, &others_read) {
                Placed::Consistent(h) => {
                    updates.push(graphs.len());
                    graphs.push(h);
                }
                Placed::Taken(h) => self.revisits(&h, e),
                Placed::Neither => {}
            }
        }
        for i in updates {
            self.revisits(&graphs[i], e);
        }
        graphs
    }
}

/// Compare-exchange `r`, revisited by `a`, reads from it now: an update if `a` wrote what it
/// expects, else a read. False where it no longer writes but another event of the graph read
/// from it (no such graph). Where `a`'s bytes are not known yet (an update before its step),
/// an update becomes a read, and the step makes it an update again if it writes.
pub(super) fn revisited_exchange(h: &mut Graph, r: EventId, a: EventId) -> bool {
    let Some(ops) = h.event(r).cas else {
        return true;
    };
    let Some((addr, size)) = h.label(r).access() else {
        return true;
    };
    let writes = h.label(a).written() == Some(&operand_bytes(ops.expected, size));
    match *h.label(r) {
        Label::Read { .. } if writes => as_update(h, r, Some(a), operand_bytes(ops.desired, size)),
        Label::Update { rf, .. } if !writes => {
            if h.events().any(|e| h.label(e).rf() == Some(Some(r))) {
                return false;
            }
            h.unplace(r);
            *h.label_mut(r) = Label::Read { addr, size, rf };
        }
        _ => {}
    }
    true
}
