//! The explorer's steps: one execution run through the executor and recorded (clocks, races,
//! backtrack points, sleep sets), its end analysed, and the next branch chosen. The state it
//! works on (runs, clocks, word histories, checkpoints) is defined in the parent module.

use super::*;
use crate::engine::EndVerdict;

impl<'a> Explorer<'a> {
    /// An exploration from the start, alone.
    pub(super) fn new(model: &'a dyn Model, cfg: &'a Config) -> Self {
        Explorer {
            model,
            cfg,
            nodes: Vec::new(),
            replay_until: 0,
            names: ThreadNames::default(),
            hand_over: false,
            split: None,
            spare: None,
            checkpoints: Vec::new(),
            max_prefix: 0,
            retired: Vec::new(),
        }
    }

    /// Run one execution along the tree's prefix and then onwards.
    /// The state is boxed: it moves between the last execution, checkpoints and retired ones.
    pub(super) fn run_one(
        &mut self,
        exec: &mut dyn Executor,
    ) -> Result<(RunEnd, Box<Run>), ExecError> {
        // the positions before replay_until repeat the last execution's decisions
        let replayed = self.replay_until.min(self.nodes.len());
        // Races are analysed from where this execution leaves the last one's path, or from the
        // begin of the atomic section it leaves it in: a section is reversed as a whole, and
        // this one's is different.
        let analyse_from = self
            .spare
            .as_ref()
            .and_then(|r| r.trace.get(self.replay_until))
            .and_then(|e| e.section)
            .unwrap_or(self.replay_until);
        let valid = self.checkpoints.partition_point(|(p, _)| *p <= replayed);
        self.retired
            .extend(self.checkpoints.drain(valid..).map(|(_, run)| run));
        let mut spare = self.spare.take();
        let (mut run, mut snap, mut pos) = match self.fast_forward(exec, &mut spare)? {
            Some(at) => at,
            None => {
                let run = match spare {
                    Some(old) => old.recycled(self.model),
                    None => Box::new(Run::new(self.model)),
                };
                // (up to a step that hangs, which the engine runs itself)
                let script: Vec<ScriptStep> = self.nodes[..replayed]
                    .iter()
                    .map_while(|n| if n.hangs { None } else { n.step.clone() })
                    .collect();
                exec.script(script);
                match exec.begin() {
                    Err(ExecError::Timeout { .. }) => {
                        return Ok((self.timed_out(&run, ThreadId::MAIN), run))
                    }
                    r => (run, r?, 0),
                }
            }
        };
        run.sync.spurious_bound = self.cfg.spurious_wakeups;
        run.sync.nondet_values = self.cfg.nondet_values;
        let mut sleep: Vec<(ThreadId, Asleep)> = Vec::new();
        loop {
            self.absorb(&mut run, &snap);
            self.refresh_updaters(&mut run);
            if self.top_depth() == Some(pos) {
                // a new leaf of the split top: explore below it only if it is ours
                if self.nodes.len() <= pos && !self.leaf(pos) {
                    exec.end()?;
                    return Ok((RunEnd::Skipped, run));
                }
                run.claimed = true;
            }
            if let Some(ended) = snap.ended.take() {
                exec.recycle(std::mem::take(&mut snap));
                return Ok((self.finish(&mut run, ended), run));
            }
            if pos >= self.cfg.max_steps {
                exec.end()?;
                return Ok((RunEnd::Bounded, run));
            }
            self.take_checkpoint(&run, pos);
            let t = if pos < self.nodes.len() {
                let t = self.nodes[pos].chosen;
                let pending_op = run
                    .threads
                    .get(t.index())
                    .and_then(|th| th.pending)
                    .map(|p| p.op);
                let node = &mut self.nodes[pos];
                if node.op.is_none() {
                    if let Some(op) = pending_op {
                        node.op = Some(op);
                        node.alts = run.sync.alternatives(&op);
                    }
                }
                // Await detection is only a hint that a spin would repeat itself: its hash can
                // take in dead values the runtime's own calls leave behind, which differ between
                // runs. A replay follows the recorded choice whatever the hint says now.
                if !(run.is_enabled(t) || run.enabled_but_awaiting(t)) || node.op != pending_op {
                    exec.end()?;
                    if std::env::var_os("SMC_DEBUG_REPLAY").is_some() {
                        eprintln!(
                            "smc-run: replay at event {}: {t} recorded {:?}, now {:?}",
                            pos + 1,
                            node.op,
                            pending_op
                        );
                    }
                    return Err(diverged(pos, t));
                }
                t
            } else {
                let enabled = run.enabled();
                let awake: Threads = enabled
                    .iter()
                    .copied()
                    .filter(|t| !sleep.iter().any(|(s, _)| s == t))
                    .collect();
                let in_top = self.top_depth().is_some_and(|d| pos < d);
                let first = if in_top {
                    awake.iter().copied().min_by_key(|&t| self.names.path(t))
                } else {
                    // (a thread that ran `fair_after` steps in a row gives way)
                    let (last, n) = run.streak;
                    let turn = n >= self.cfg.fair_after;
                    (awake.iter().copied())
                        .find(|&t| !turn || run.owner_of(t) != last)
                        .or_else(|| awake.first().copied())
                };
                let Some(t) = first else {
                    exec.end()?;
                    if enabled.is_empty() {
                        return Ok((self.stuck(&mut run), run));
                    }
                    // every enabled thread is asleep: the others' pending operations still race
                    // with what ran (a lock that waits for a holder that never unlocks would
                    // otherwise never be tried first)
                    self.analyse_pending(&mut run);
                    return Ok((RunEnd::Blocked, run));
                };
                let op = run.threads[t.index()].pending.unwrap().op;
                self.nodes.push(Node {
                    chosen: t,
                    alt: 0,
                    alts: run.sync.alternatives(&op),
                    enabled: enabled.clone(),
                    // the split top branches every way
                    backtrack: if in_top {
                        awake
                    } else {
                        smallvec::smallvec![t]
                    },
                    sleep: std::mem::take(&mut sleep),
                    explored: Vec::new(),
                    op: Some(op),
                    step: None,
                    hangs: false,
                    section: None,
                });
                t
            };
            let pending = run.threads[t.index()].pending.unwrap();
            if self.hand_over && pos + 1 == self.nodes.len() {
                let (value, _) = run.sync.apply(t, &pending.op, self.nodes[pos].alt);
                let patch = run.forwarding(t, &pending.op).map(|f| (f.mask, f.bytes));
                let slot = run.threads[t.index()].slot;
                exec.hand_over(slot, &Reply { value, patch })?;
                exec.end()?;
                return Ok((RunEnd::HandedOver, run));
            }
            if let Some((owner, key)) = run.threads[t.index()].updater {
                // a buffered store reaches memory; no thread of the program runs for it
                let entry = run
                    .buffers
                    .as_mut()
                    .and_then(|b| b.take(owner, key))
                    .expect("an updater has an entry");
                let owner_slot = run.threads[owner.index()].slot;
                exec.commit(owner_slot, entry.addr, &entry.bytes)?;
                self.nodes[pos].step = Some(ScriptStep::Commit {
                    owner: owner_slot,
                    addr: entry.addr,
                    bytes: entry.bytes.clone(),
                });
                let mut ev = Event::from_pending(t, &pending);
                ev.value_written = Some(le_value(&entry.bytes));
                ev.bytes = Some(entry.bytes.clone());
                run.threads[t.index()].pending = None;
                run.flushing = Some(entry);
                self.record(&mut run, ev, pos >= analyse_from, false);
                sleep = self.child_sleep(&run, pos, t, &run.trace[pos].ev);
                pos += 1;
                continue;
            }
            let (value, wrote) = run.sync.apply(t, &pending.op, self.nodes[pos].alt);
            let patch = run.forwarding(t, &pending.op).map(|f| (f.mask, f.bytes));
            let slot = run.threads[t.index()].slot;
            let reply = Reply { value, patch };
            exec.recycle(std::mem::take(&mut snap));
            let expect_hang = self.nodes[pos].hangs;
            let stepped = if expect_hang {
                exec.step_hanging(slot, &reply)
            } else {
                exec.step(slot, &reply)
            };
            self.nodes[pos].step = Some(ScriptStep::Run {
                slot,
                reply,
                pc: pending.pc,
                addr: pending.op.location().unwrap_or(0),
            });
            let mut ev = Event::from_pending(t, &pending);
            ev.reply = value;
            ev.wrote = wrote;
            snap = match stepped {
                Err(ExecError::Timeout { .. }) => {
                    // (real threads: the execution ends here, its races analysed)
                    run.threads[t.index()].pending = None;
                    self.record(&mut run, ev, pos >= analyse_from, false);
                    self.analyse_pending(&mut run);
                    return Ok((self.timed_out(&run, t), run));
                }
                r => r?,
            };
            let hung = matches!(
                snap.slots.get(slot as usize).map(|v| &v.state),
                Some(SlotState::Hung)
            );
            // (a saved schedule does not say which steps hang: they hang again in full)
            if expect_hang && !hung {
                exec.end()?;
                return Err(diverged(pos, t));
            }
            self.nodes[pos].hangs = hung;
            if let Some(prev) = snap
                .slots
                .get_mut(slot as usize)
                .and_then(|s| s.prev.take())
            {
                if matches!(pending.op, Op::Cas { .. }) {
                    ev.wrote = prev.wrote;
                }
                ev.value_read = prev.read;
                ev.value_written = prev.written;
                ev.bytes = prev.stored;
            }
            if let Op::FutexWait { addr, expected, .. } = pending.op {
                // the step compared the word: equal, and the thread waits
                if ev.value_read.is_some_and(|v| v as u32 == expected) {
                    run.sync.futex_wait(t, addr);
                }
            }
            run.threads[t.index()].pending = None;
            self.record(&mut run, ev, pos >= analyse_from, false);
            sleep = self.child_sleep(&run, pos, t, &run.trace[pos].ev);
            pos += 1;
        }
    }

    /// Start the execution at the deepest checkpoint of the prefix it repeats, the executor
    /// carrying out the steps before it by itself: the engine's state there (the trace up to
    /// there taken from the last execution, `spare`), the live snapshot and the position.
    /// None when there is no such checkpoint or the executor cannot: the execution then
    /// starts from the start.
    pub(super) fn fast_forward(
        &mut self,
        exec: &mut dyn Executor,
        spare: &mut Option<Box<Run>>,
    ) -> Result<Option<(Box<Run>, Snapshot, usize)>, ExecError> {
        let Some(&(at, _)) = self.checkpoints.last() else {
            return Ok(None);
        };
        let usable = at > 0
            && at <= self.max_prefix
            && spare.as_ref().is_some_and(|r| r.trace.len() >= at)
            && self.nodes[..at]
                .iter()
                .all(|n| n.step.is_some() && !n.hangs);
        if !usable {
            return Ok(None);
        }
        let mut steps = self.nodes[..at].iter().filter_map(|n| n.step.as_ref());
        let (snap, ran) = match exec.begin_after(&mut steps) {
            // a step ran out of time where it did not before: run it step by step
            Err(ExecError::Timeout { .. }) => return Ok(None),
            r => r?,
        };
        let saved = &self.checkpoints.last().expect("a checkpoint").1;
        if ran < at || !saved.waits_as(&snap) {
            exec.end()?;
            return Err(diverged(ran, self.nodes[ran].chosen));
        }
        let mut run = spare.take().expect("a last execution");
        run.copy_from(saved);
        // past the split top (which may have been set after the checkpoint was taken)
        run.claimed = self.top_depth().is_some_and(|d| d < at);
        run.trace.truncate(at);
        // a section that ended after `at` is open again
        if let Some(b) = run.trace.last().and_then(|e| e.section) {
            if !matches!(run.trace[at - 1].ev.op, Op::AtomicEnd) {
                for e in &mut run.trace[b..] {
                    e.closed_at = None;
                }
            }
        }
        // the pending events as the runtime reports them now: the saved ones but for their
        // await hashes, which are this execution's (equal unless the program reads state the
        // checker does not reset)
        for (view, t) in snap.slots.iter().zip(&run.slot_tid) {
            if let SlotState::Stopped(p) = view.state {
                run.threads[t.index()].pending = Some(p);
            }
        }
        Ok(Some((run, snap, at)))
    }

    /// Keep the state at `pos` for the executions that will branch there or after it: at
    /// every position while the states are small, further apart as they grow.
    pub(super) fn take_checkpoint(&mut self, run: &Run, pos: usize) {
        if pos == 0 || pos > self.max_prefix {
            return;
        }
        let last = self.checkpoints.last().map_or(0, |(p, _)| *p);
        // a word's history counts as its 8 bytes' did when the constants were tuned; a thread
        // as 2, since threads are copied field by field into allocations that are kept
        let size = 8 * run.locs.len() + 2 * run.threads.len() + 8;
        let spacing = (size / CHECKPOINT_STEP).max(pos * size / CHECKPOINT_BUDGET);
        if pos > last + spacing {
            let mut saved = self
                .retired
                .pop()
                .unwrap_or_else(|| Box::new(Run::new(self.model)));
            saved.copy_from(run);
            self.checkpoints.push((pos, saved));
        }
    }

    /// The sleep set after `t` ran `ev` at node `pos`: sleeping or explored threads whose next
    /// event is independent of it.
    pub(super) fn child_sleep(
        &self,
        run: &Run,
        pos: usize,
        t: ThreadId,
        ev: &Event,
    ) -> Vec<(ThreadId, Asleep)> {
        let node = &self.nodes[pos];
        node.sleep
            .iter()
            .chain(node.explored.iter())
            .filter(|(q, a)| *q != t && !a.conflicts(self.model, ev))
            .map(|(q, a)| {
                let mut a = a.clone();
                if matches!(ev.op, Op::Update { owner, .. } if owner == *q) && a.ev.forwarded != 0 {
                    // its own store reached memory: the sleeping load now reads memory instead
                    // (the same value; a load is independent of its thread's updates)
                    a.ev.forwarded = run.forwarding(*q, &a.ev.op).map_or(0, |f| f.mask);
                }
                (*q, a)
            })
            .collect()
    }

    /// The updaters of store buffers, as threads: each entry that may reach memory next is the
    /// pending update of its updater.
    pub(super) fn refresh_updaters(&mut self, run: &mut Run) {
        let Some(buffers) = &mut run.buffers else {
            return;
        };
        if !buffers.take_changed() {
            return; // the updaters' pending updates are still those of the buffers
        }
        let ready: SmallVec<[_; 4]> = buffers
            .ready()
            .into_iter()
            .map(|(owner, key, e)| {
                let pc = run.trace[e.store].ev.pc;
                (owner, key, e.addr, e.bytes.len() as u32, pc)
            })
            .collect();
        for th in run.threads.iter_mut().filter(|th| th.updater.is_some()) {
            th.pending = None;
        }
        for (owner, key, addr, size, pc) in ready {
            let id = self.names.child(owner, UPDATER | key);
            let th = run.thread(id);
            th.updater = Some((owner, key));
            th.parent = Some(owner);
            let op = Op::Update {
                addr: TargetAddr(addr),
                size,
                owner,
            };
            th.pending = Some(Pending {
                op,
                pc,
                hash: 0,
                site: 0,
                skipped: 0,
                cas: None,
                stores: None,
            });
        }
    }

    /// Take in new threads and pending operations from a snapshot.
    pub(super) fn absorb(&mut self, run: &mut Run, snap: &Snapshot) {
        for (slot, view) in snap.slots.iter().enumerate() {
            // the slot of a thread that exited (and was joined) taken by a new one
            let reused = matches!(view.state, SlotState::Stopped(p) if matches!(p.op, Op::ThreadStart))
                && slot > 0
                && slot < run.slot_tid.len()
                && run.threads[run.slot_tid[slot].index()].exited;
            if slot >= run.slot_tid.len() || reused {
                let tid = if slot == 0 {
                    ThreadId::MAIN
                } else {
                    let parent = run
                        .slot_tid
                        .get(view.parent as usize)
                        .copied()
                        .unwrap_or(ThreadId::MAIN);
                    let nth = run.thread(parent).children;
                    run.thread(parent).children += 1;
                    let id = self.names.child(parent, nth as u64);
                    let spawn_clock = run.threads[parent.index()].clock.clone();
                    let th = run.thread(id);
                    th.parent = Some(parent);
                    th.clock = spawn_clock;
                    id
                };
                if reused {
                    run.slot_tid[slot] = tid;
                } else {
                    run.slot_tid.push(tid);
                }
                run.thread(tid).slot = slot as u32;
            }
            let tid = run.slot_tid[slot];
            let th = run.thread(tid);
            match &view.state {
                SlotState::Stopped(p) => {
                    if th.pending.is_none() && !th.exited {
                        if matches!(p.op, Op::ThreadStart) {
                            th.start = p.pc;
                        }
                        th.pending = Some(*p);
                    }
                }
                SlotState::Exited => th.pending = None,
                SlotState::Hung => {
                    th.pending = None;
                    th.hung = true;
                }
            }
        }
    }

    /// Add an executed event: vector clock, race analysis (when `analyse`), histories.
    /// A `virtual_` event is a pending operation analysed as if it ran next; it is removed again.
    pub(super) fn record(&mut self, run: &mut Run, ev: Event, analyse: bool, virtual_: bool) {
        let t = ev.thread;
        let buffered = run.buffers.is_some();
        let forwarding = run.forwarding(t, &ev.op);
        let forwarded = forwarding.as_ref().map_or(0, |f| f.mask);
        let mut ev = ev;
        ev.forwarded = forwarded;
        let fp = ev.op.footprint(ev.wrote, buffered);
        let (preds, race_preds) = run.links(&ev, &fp, forwarded);
        let th = &run.threads[t.index()];
        let seq = th.seq + 1;
        let mut clock = th.clock.clone();
        if let Op::Join { .. } = ev.op {
            if let Some(x) = run
                .join_target(&ev.op)
                .and_then(|c| run.threads[c.index()].exit_event)
            {
                clock.join(&run.trace[x].clock);
            }
        }
        let drained = ev.op.drains_buffer() && !run.sync.only_loaded(&ev.op, ev.wrote);
        if buffered && (drained || matches!(ev.op, Op::HeapRelease { .. })) {
            // the buffer is empty (or holds nothing in the released block): everything it
            // held that reached memory did so before this event
            clock.join(&run.threads[t.index()].flushed);
        }
        let flushing = if virtual_ { None } else { run.flushing.take() };
        if let (Some(e), Op::Update { owner, .. }) = (&flushing, ev.op) {
            // after its store, and (PSO) after the updates of earlier sfence epochs
            clock.join(&run.trace[e.store].clock);
            for c in run.threads[owner.index()]
                .epoch_clocks
                .iter()
                .take(e.epoch as usize)
            {
                clock.join(c);
            }
        }
        let mut races: SmallVec<[usize; 4]> = SmallVec::new();
        if analyse {
            for &c in &race_preds {
                let p = run.trace[c].ev.thread;
                let cseq = run.trace[c].seq;
                // (not when a later step it links to comes after it; events of one atomic
                // section are one step)
                let first = |j: usize| run.trace[j].section.unwrap_or(j);
                let immediate = clock.get(p) < cseq
                    && !preds.iter().any(|&o| {
                        first(o) != first(c) && run.trace[run.step_last(o)].clock.get(p) >= cseq
                    });
                if !immediate {
                    continue;
                }
                match (
                    ev.op.acquired_object(),
                    run.trace[c].ev.op.released_object(),
                ) {
                    (Some(a), Some(r)) if a == r => {
                        // A blocked acquire cannot move before the release; reverse it with the
                        // acquire that release ended instead: the releasing thread's. A
                        // semaphore's wait may not have been blocked (the count was not 0), and
                        // where it was, any earlier wait took what it could have: the post and
                        // each of those.
                        let counting = matches!(ev.op, Op::SemWait { .. });
                        let takes = |i: &usize| {
                            run.trace[*i].ev.op.takes_object(run.trace[*i].ev.wrote) == Some(a)
                        };
                        if counting {
                            races.push(c);
                            races.extend((0..c).filter(takes));
                        } else {
                            races.push(held_until(&run.trace, c, a, takes));
                        }
                    }
                    // an event inside an atomic section moves with the whole section
                    _ => races.push(run.trace[c].section.unwrap_or(c)),
                }
            }
        }
        for &c in &preds {
            clock.join(&run.trace[run.step_last(c)].clock);
        }
        clock.set(t, seq);
        let pos = run.trace.len();
        let section = match ev.op {
            Op::AtomicBegin => Some(pos),
            // (a buffer's updates inside its thread's section belong to the section)
            _ => run.threads[ev.owner().index()].atomic_begin,
        };
        run.trace.push(TraceEvent {
            ev,
            clock,
            seq,
            section,
            closed_at: None,
        });
        if let (Op::AtomicEnd, Some(b), false) = (&run.trace[pos].ev.op, section, virtual_) {
            for e in &mut run.trace[b..=pos] {
                e.closed_at = Some(pos as u32);
            }
        }
        let open_section = section.is_some() && !matches!(run.trace[pos].ev.op, Op::AtomicEnd);
        for e in races {
            if open_section && !virtual_ {
                run.deferred.push((e, pos));
            } else {
                self.reverse(&*run, e, pos);
            }
        }
        if matches!(run.trace[pos].ev.op, Op::AtomicEnd) {
            self.reverse_deferred(run);
        }
        if virtual_ {
            run.trace.pop();
            return;
        }
        // histories (a forwarded byte joins them when the entry it read reaches memory)
        for a in fp.iter() {
            let skip = if a.write { 0 } else { forwarded };
            for (word, mask) in word_masks(a.addr, a.size, skip) {
                let h = run.locs.entry(word).or_default();
                if a.write {
                    h.write(pos, mask);
                } else {
                    h.read(pos, mask, t);
                }
            }
        }
        self.record_buffers(run, pos, flushing, forwarding.map(|f| f.sources));
        let silent = run.trace[pos].ev.is_silent_update();
        let (op, wrote, pc, hash, value) = {
            let ev = &run.trace[pos].ev;
            (ev.op, ev.wrote, ev.pc, ev.hash, ev.value_read)
        };
        let clock = run.trace[pos].clock.clone();
        // (a store buffer's updates are its thread's steps)
        let owner = run.owner_of(t);
        run.streak = match run.streak {
            (s, n) if s == owner => (owner, n + 1),
            _ => (owner, 1),
        };
        let th = run.thread(t);
        th.seq = seq;
        th.clock = clock;
        th.last_event = Some(pos);
        // await-loop windows: a read, a compare-exchange that failed, or an update that wrote
        // back what it read (a failed test-and-set) leaves memory as it was
        let is_read_only = (op.is_load() && !(matches!(op, Op::Cas { .. }) && wrote)) || silent;
        if is_read_only {
            let (addr, size) = op.data().unwrap();
            th.window.push(WindowRead {
                pc,
                hash,
                addr: addr.0,
                size,
                value,
            });
        } else if let (Some(obj), false) = (op.tried(), wrote) {
            // (a try that failed read its object: the same try in the same state waits for
            // another thread to change it, whose footprint writes the object's byte)
            th.window.push(WindowRead {
                pc,
                hash,
                addr: obj.0,
                size: 1,
                value: None,
            });
        } else if !matches!(op, Op::Yield | Op::Fence { .. } | Op::ThreadStart) {
            run.threads[t.index()].window.clear();
        }
        if fp.writes() && !silent {
            for (i, other) in run.threads.iter_mut().enumerate() {
                if i != t.index()
                    && other.window.iter().any(|r| {
                        fp.iter().any(|w| {
                            w.write
                                && w.addr < r.addr + r.size as u64
                                && r.addr < w.addr + w.size as u64
                        })
                    })
                {
                    other.window.clear();
                }
            }
        }
        match op {
            Op::ThreadExit => {
                let th = run.thread(t);
                th.exited = true;
                th.exit_event = Some(pos);
            }
            Op::ProcessExit { handlers: true, .. } => run.process_exit = Some(pos),
            Op::AtomicBegin => run.thread(t).atomic_begin = Some(pos),
            Op::AtomicEnd => run.thread(t).atomic_begin = None,
            _ => {}
        }
    }

    /// Store-buffer bookkeeping of an executed event: a store enters its buffer, a forwarded
    /// load is remembered with its entries, an update hands its forwarded load to memory.
    pub(super) fn record_buffers(
        &mut self,
        run: &mut Run,
        pos: usize,
        flushing: Option<Entry>,
        sources: Option<SmallVec<[usize; 4]>>,
    ) {
        let per_location = self
            .model
            .buffers()
            .is_some_and(|(k, _)| k == BufferKind::PerLocation);
        let Some(buffers) = run.buffers.as_mut() else {
            return;
        };
        let ev = &run.trace[pos].ev;
        let t = ev.thread;
        match ev.op {
            Op::Store { addr, size } | Op::RmwStore { addr, size } => {
                let bytes = ev
                    .bytes
                    .clone()
                    .unwrap_or_else(|| smallvec::smallvec![0; size as usize]);
                buffers.push(t, addr.0, bytes, pos);
            }
            Op::Load { .. } | Op::RmwLoad { .. } => {
                if let Some(sources) = sources {
                    buffers.forwarded(&sources, pos);
                }
            }
            Op::Fence { kind } if per_location && kind.orders_stores() => buffers.store_fence(t),
            Op::Update { owner, .. } => {
                let e = flushing.expect("an update has its entry");
                if let Some(l) = e.forwarded_to {
                    let lt = run.trace[l].ev.thread;
                    for (word, mask) in word_masks(e.addr, e.bytes.len() as u32, 0) {
                        let h = run.locs.entry(word).or_default();
                        h.read(l, mask, lt);
                    }
                }
                let clock = run.trace[pos].clock.clone();
                let th = run.thread(owner);
                th.flushed.join(&clock);
                if th.epoch_clocks.len() <= e.epoch as usize {
                    th.epoch_clocks
                        .resize(e.epoch as usize + 1, Clock::default());
                }
                th.epoch_clocks[e.epoch as usize].join(&clock);
            }
            _ => {}
        }
    }

    /// Source-DPOR's backtracking for the race `e` < `e2` (trace positions): make sure some
    /// initial of notdep(e).proc(e2) is explored right before `e`.
    /// An atomic section is one step, from its begin to its end (its events are contiguous:
    /// nothing else runs inside one): e2 stands for its whole section, which must have ended
    /// (or be the last in the trace), and a section is ordered after what any of its events is
    /// ordered after.
    pub(super) fn reverse(&mut self, run: &Run, e: usize, e2: usize) {
        let (s2, _) = run.step(e2);
        let q = run.trace[s2].ev.thread;
        // first step of each thread in v = notdep(e) . e2
        let mut firsts: SmallVec<[(ThreadId, usize); 8]> = SmallVec::new();
        for j in (e + 1..s2).chain(std::iter::once(s2)) {
            let (first, last) = run.step(j);
            if first != j || (j < s2 && run.hb(e, last)) {
                continue; // (inside a step, or after e)
            }
            let t = run.trace[j].ev.thread;
            if !firsts.iter().any(|(u, _)| *u == t) {
                firsts.push((t, j));
            }
        }
        let initials: Threads = firsts
            .iter()
            .filter(|&&(_, fj)| {
                let (_, last) = run.step(fj);
                !firsts.iter().any(|&(_, gj)| gj < fj && run.hb(gj, last))
            })
            .map(|&(t, _)| t)
            .collect();
        let Some(node) = self.nodes.get_mut(e) else {
            return;
        };
        if initials.iter().any(|&t| node.covers(t)) {
            return;
        }
        let candidates: Threads = initials
            .iter()
            .copied()
            .filter(|t| node.enabled.contains(t))
            .collect();
        if candidates.contains(&q) {
            node.backtrack.push(q);
        } else if let Some(&c) = candidates.first() {
            node.backtrack.push(c);
        } else {
            // the initials are blocked here: fall back to every enabled thread
            for &t in &node.enabled {
                if !node.covers(t) {
                    node.backtrack.push(t);
                }
            }
        }
    }

    /// No thread can run: deadlock, livelock, or an execution blocked by an assumption.
    pub(super) fn stuck(&mut self, run: &mut Run) -> RunEnd {
        self.analyse_pending(run);
        // a thread set aside as hung: the execution ends with it (its hang, not a deadlock of
        // the threads that wait for it)
        if let Some(t) = (0..run.threads.len()).find(|&i| run.threads[i].hung) {
            return self.timed_out(run, ThreadId(t as u32));
        }
        let live = run.live();
        if live.is_empty() {
            return RunEnd::Complete; // every thread left; the process exits on its own
        }
        let assumed = |t: &ThreadId| {
            matches!(
                run.threads[t.index()].pending,
                Some(Pending {
                    op: Op::Assume { cond: false },
                    ..
                })
            )
        };
        if live.iter().any(assumed) {
            return RunEnd::Blocked; // an __VERIFIER_assume failed: this execution does not count
        }
        let lock_wait = |t: ThreadId| {
            run.threads[t.index()]
                .pending
                .is_some_and(|p| p.hash == crate::channel::LOCK_WAIT_HASH)
        };
        let spinning: Vec<ThreadId> = live
            .iter()
            .copied()
            .filter(|&t| run.awaiting(t) && !lock_wait(t))
            .collect();
        let (kind, message) = if let Some(owner) = run.sync.atomic_owner {
            (
                ErrorKind::Deadlock,
                format!(
                    "deadlock: {owner} blocks inside an atomic section, where no other thread runs"
                ),
            )
        } else if spinning.is_empty() {
            (
                ErrorKind::Deadlock,
                format!("deadlock: every live thread is blocked ({})", names(&live)),
            )
        } else {
            (
                ErrorKind::Hang,
                format!(
                    "livelock: {} spin forever re-reading memory that no other thread can change",
                    names(&spinning)
                ),
            )
        };
        RunEnd::Error(self.counterexample(run, kind, message, None, None))
    }

    pub(super) fn timed_out(&self, run: &Run, t: ThreadId) -> RunEnd {
        let msg = format!(
            "{t} {} without reaching another visible operation (an endless loop on \
             thread-local data?); see --exec-timeout",
            crate::results::TIMEOUT_HANG
        );
        RunEnd::Error(self.counterexample(run, ErrorKind::Hang, msg, None, None))
    }

    pub(super) fn finish(&mut self, run: &mut Run, ended: Ended) -> RunEnd {
        // A thread that failed (an assertion, abort(), a crash) ended the process during its
        // last step: the other threads' next operations, which it cut off, race with that
        // step, so that they also run before it (SV-COMP's `if (!c) abort()` waits this way).
        let ender = ended
            .error
            .as_ref()
            .filter(|e| !matches!(e.kind, RuntimeErrorKind::Limit))
            .and_then(|e| e.slot)
            .and_then(|s| run.slot_tid.get(s as usize).copied());
        self.analyse_pending_cut_off(run, ender);
        match super::super::end_verdict(&ended, self.cfg.allow_exit_status) {
            EndVerdict::Complete => RunEnd::Complete,
            EndVerdict::Bounded => RunEnd::Bounded,
            EndVerdict::Error {
                kind,
                message,
                fault,
                signal,
            } => {
                let fault = fault.and_then(|(slot, pc, addr)| {
                    run.slot_tid.get(slot as usize).map(|&t| (t, pc, addr))
                });
                RunEnd::Error(self.counterexample(run, kind, message, fault, signal))
            }
        }
    }

    /// Races of the operations threads were still waiting to run when the execution ended:
    /// a blocked lock, or a thread cut off by the process exit, may have run earlier.
    pub(super) fn analyse_pending(&mut self, run: &mut Run) {
        self.analyse_pending_cut_off(run, None);
    }

    /// [`Explorer::analyse_pending`], where the process ended in the last step of `ender`: an
    /// enabled pending operation of another thread also races with that step. One that waits
    /// for an atomic section to end races with the section (what is inside it is unknown).
    fn analyse_pending_cut_off(&mut self, run: &mut Run, ender: Option<ThreadId>) {
        self.reverse_deferred(run);
        let last = ender.and_then(|t| run.threads[t.index()].last_event);
        run.ended_at = last;
        let section = run
            .sync
            .atomic_owner
            .and_then(|o| run.threads[o.index()].atomic_begin);
        for t in run.live() {
            let p = run.threads[t.index()].pending.unwrap();
            let saved = run.process_exit;
            // (what every event races with)
            if run.held_off_by_section(t) {
                run.process_exit = section;
            } else if last.is_some() && Some(t) != ender && run.is_enabled(t) {
                run.process_exit = last;
            }
            self.record(run, Event::from_pending(t, &p), true, true);
            run.process_exit = saved;
        }
    }

    /// Move to the deepest node with something left to explore. False when done.
    pub(super) fn next_branch(&mut self, run: &Run) -> bool {
        while let Some(i) = self.nodes.len().checked_sub(1) {
            let in_top = self.top_depth().is_some_and(|d| i < d);
            let names = &self.names;
            let node = &mut self.nodes[i];
            if node.alt + 1 < node.alts {
                node.alt += 1;
                node.hangs = false; // another outcome: learnt when it runs
                self.replay_until = i;
                return true;
            }
            if let Some(te) = run.trace.get(i) {
                if !node.explored.iter().any(|(t, _)| *t == node.chosen) {
                    let mut asleep = Asleep::plain(te.ev.clone());
                    let mut ended = run.ended_at == Some(i);
                    match &node.section {
                        Some(SectionBody::Closed(body)) => {
                            asleep.section = Some(body.as_slice().into())
                        }
                        Some(SectionBody::Open) => ended = true,
                        None => {}
                    }
                    if ended {
                        // The step ended the process, or began a section that did not end as
                        // one step: asleep, it wakes at any other event.
                        asleep.ev.op = Op::ProcessExit {
                            status: 0,
                            handlers: true,
                        };
                    }
                    node.explored.push((node.chosen, asleep));
                }
            }
            let candidates = node.backtrack.iter().copied().filter(|&t| {
                node.enabled.contains(&t)
                    && !node.explored.iter().any(|(s, _)| *s == t)
                    && !node.asleep(t)
            });
            // In the split top every worker must take the same order: ids depend on which
            // subtrees a worker explored, spawn-tree paths do not.
            let next = if in_top {
                candidates.min_by_key(|&t| names.path(t))
            } else {
                candidates.min()
            };
            if let Some(p) = next {
                node.chosen = p;
                node.alt = 0;
                node.alts = 1;
                node.op = None; // its operation and outcomes are learnt when it runs
                node.step = None;
                node.hangs = false;
                node.section = None;
                self.nodes.truncate(i + 1);
                self.replay_until = i;
                return true;
            }
            self.nodes.pop();
        }
        false
    }
}

/// The event the acquire of `obj` racing with release `c` must move before: the acquire that
/// took what `c` gives back, the releasing thread's own. A thread may release what it does not
/// hold (glibc's normal mutex and spin lock let it): the object was then free before `c`, or
/// held by another thread, and the racing acquire moves before `c` itself, or before that
/// other thread's acquire.
fn held_until(
    trace: &[TraceEvent],
    c: usize,
    obj: TargetAddr,
    takes: impl Fn(&usize) -> bool,
) -> usize {
    let p = trace[c].ev.thread;
    let gives_back = |i: &usize| trace[*i].ev.op.released_object() == Some(obj);
    let own = (0..c)
        .rev()
        .find(|i| trace[*i].ev.thread == p && (takes(i) || gives_back(i)));
    if let Some(acq) = own.filter(&takes) {
        if !(acq + 1..c).any(|i| gives_back(&i)) {
            return acq;
        }
    }
    match (0..c).rev().find(|i| takes(i) || gives_back(i)) {
        Some(acq) if takes(&acq) => acq,
        _ => c,
    }
}
