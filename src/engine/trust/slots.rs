//! Which graph thread runs in each of the runtime's slots. A thread that was joined leaves
//! its slot to the next thread created (the runtime's `free_slot`: the lowest joined slot,
//! else a new one), so a program that creates and joins threads in rounds runs in a few slots.

use std::ops::Deref;

use crate::graph::Label;

/// The graph thread of each slot of an execution, as far as it has run.
#[derive(Clone, Debug)]
pub(super) struct Slots {
    threads: Vec<u32>,
    /// Per slot: its thread was joined, and no thread has taken the slot since.
    joined: Vec<bool>,
}

impl Default for Slots {
    /// Main alone, in slot 0.
    fn default() -> Self {
        Slots {
            threads: vec![0],
            joined: vec![false],
        }
    }
}

impl Deref for Slots {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.threads
    }
}

impl Slots {
    /// The slot the next thread created takes.
    pub fn next_free(&self) -> u32 {
        let reused = (1..self.threads.len()).find(|&s| self.joined[s]);
        reused.unwrap_or(self.threads.len()) as u32
    }

    /// Graph thread `child` was created: it takes [`Slots::next_free`].
    pub fn spawned(&mut self, child: u32) {
        let slot = self.next_free() as usize;
        if slot == self.threads.len() {
            self.threads.push(child);
            self.joined.push(false);
        } else {
            self.threads[slot] = child;
            self.joined[slot] = false;
        }
    }

    /// Graph thread `child` was joined: its slot is free for the next thread (main's never).
    pub fn joined(&mut self, child: u32) {
        if let Some(slot) = self.threads.iter().position(|&t| t == child) {
            self.joined[slot] = slot > 0;
        }
    }

    /// What an event of the execution does to the slots: a spawn takes one, a join frees one.
    pub fn note(&mut self, label: &Label) {
        match *label {
            Label::Spawn { child } => self.spawned(child),
            Label::Join { child } => self.joined(child),
            _ => {}
        }
    }

    /// The slot of graph thread `thread`, unless no thread had it or another has taken it.
    pub fn of(&self, thread: u32) -> Option<u32> {
        self.threads
            .iter()
            .position(|&t| t == thread)
            .map(|s| s as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::Slots;

    #[test]
    fn a_joined_threads_slot_goes_to_the_next_thread_created() {
        let mut s = Slots::default();
        s.spawned(1);
        s.spawned(2);
        assert_eq!(&*s, &[0, 1, 2]);
        s.joined(2);
        s.joined(1);
        // (the lowest joined slot first)
        assert_eq!(s.next_free(), 1);
        s.spawned(3);
        assert_eq!((s.of(3), s.of(1), s.of(2)), (Some(1), None, Some(2)));
        s.spawned(4);
        assert_eq!(&*s, &[0, 3, 4]);
        s.spawned(5);
        assert_eq!((s.of(5), s.next_free()), (Some(3), 4));
    }
}
