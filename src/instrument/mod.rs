//! The patch plan: every site of the program with the place of its relocated copy, and the
//! copies themselves once the runtime says where its trampoline is.

use crate::decode::{DecodedSite, Decoder};
use crate::program::CodeSection;
use crate::program::Program;
use crate::site::{
    site_flags, site_kind, Site, ATOMIC_FUNCTION_PREFIX, ERROR_CALLS, ERROR_CALL_PANIC,
    MODELLED_CALLS, RUST_START_PANIC, UNSEEN_FUNCTIONS,
};

/// The code section holding `addr`.
fn section_of(program: &Program, addr: u64) -> Option<&CodeSection> {
    program
        .code
        .iter()
        .find(|c| addr >= c.addr && addr - c.addr < c.bytes.len() as u64)
}

#[derive(Clone)]
pub struct Plan {
    pub sites: Vec<DecodedSite>,
    /// Some code section uses wide register state ([`crate::decode::DecodedSection`]).
    pub wide_state: bool,
    stride: usize,
    decoder: &'static dyn Decoder,
    /// The program's instruction set (which runtime it runs with, and how it is started).
    pub arch: crate::program::Arch,
    /// What each memory access depends on, by its file address (`Decoder::dependencies`).
    pub dependencies:
        std::sync::Arc<std::collections::BTreeMap<u64, crate::decode::SiteDependencies>>,
}

impl Plan {
    /// A site's instruction as assembly, for messages.
    pub fn disassemble(&self, site: &DecodedSite) -> String {
        self.decoder.disassemble(site)
    }

    /// The plan for `program`; with `private`, its private sites too (`Decoder::decode`).
    pub fn new(program: &Program, decoder: &'static dyn Decoder, private: bool) -> Plan {
        let mut sites = Vec::new();
        let mut wide_state = false;
        let mut dependencies = std::collections::BTreeMap::new();
        for section in &program.code {
            let d = decoder.decode(section, private);
            sites.extend(d.sites);
            wide_state |= d.wide_state;
            dependencies.extend(decoder.dependencies(section));
        }
        // Hooks, in place of any site there: the error calls the program defines itself
        // (SV-COMP's `void reach_error(){}`), whose first instruction reports the error, the
        // functions that are atomic by their name, whose entry and returns begin and end a
        // section, and the library functions the runtime carries out.
        let mut hooks: Vec<(u64, u8, u32)> = Vec::new();
        for (k, name) in ERROR_CALLS.iter().enumerate() {
            if let Some(addr) = program.function_address(name) {
                hooks.push((addr, site_kind::ERROR_CALL, k as u32));
            }
        }
        if let Some(addr) = program.function_address_demangled(&RUST_START_PANIC) {
            hooks.push((addr, site_kind::ERROR_CALL, ERROR_CALL_PANIC));
        }
        for (lo, hi) in program.functions_prefixed(ATOMIC_FUNCTION_PREFIX) {
            hooks.push((lo, site_kind::ATOMIC_ENTRY, 0));
            if let Some(c) = section_of(program, lo) {
                for ret in decoder.returns_in(c, lo, hi) {
                    hooks.push((ret, site_kind::ATOMIC_EXIT, 0));
                }
            }
        }
        // the library functions the runtime carries out (x86-64: the model reads its
        // argument register and returns by the copy's `ret`)
        if program.arch == crate::program::Arch::X86_64 {
            for (names, model) in MODELLED_CALLS {
                if let Some(addr) = program.function_address_demangled(names) {
                    hooks.push((addr, site_kind::MODELLED, model));
                }
            }
        }
        // the library functions that run unseen: where every way out can be hooked
        if program.arch == crate::program::Arch::X86_64 {
            for names in UNSEEN_FUNCTIONS {
                let Some((lo, hi)) = program.function_span_demangled(names) else {
                    continue;
                };
                let exits = section_of(program, lo).and_then(|c| decoder.exits_in(c, lo, hi));
                let Some(exits) = exits.filter(|e| !e.is_empty()) else {
                    continue;
                };
                let unseen: Vec<(u64, u8, u32)> = std::iter::once((lo, site_kind::UNSEEN_ENTRY))
                    .chain(exits.into_iter().map(|e| (e, site_kind::UNSEEN_EXIT)))
                    .map(|(a, k)| (a, k, 0))
                    .collect();
                // (an exit left unhooked would leave the rest of the thread unseen)
                let hookable = |&(a, k, _): &(u64, u8, u32)| {
                    section_of(program, a).is_some_and(|c| decoder.site_at(c, a, k).is_some())
                };
                if unseen.iter().all(hookable) {
                    hooks.extend(unseen);
                }
            }
        }
        for (addr, kind, size) in hooks {
            let hook = section_of(program, addr).and_then(|c| decoder.site_at(c, addr, kind));
            if let Some(mut hook) = hook {
                hook.site.size = size;
                sites.retain(|s| s.site.offset != addr);
                sites.push(hook);
            }
        }
        sites.sort_by_key(|s| s.site.offset);
        unchain_from_hooks(&mut sites);
        let stride = decoder.copy_stride();
        for (i, s) in sites.iter_mut().enumerate() {
            s.site.copy_off = (i * stride) as u32;
        }
        Plan {
            sites,
            wide_state,
            stride,
            decoder,
            arch: program.arch,
            dependencies: std::sync::Arc::new(dependencies),
        }
    }

    /// The wire table (sorted by address, as the runtime's binary search needs).
    pub fn wire_sites(&self) -> Vec<Site> {
        self.sites.iter().map(|s| s.site).collect()
    }

    pub fn code_size(&self) -> usize {
        self.sites.len() * self.stride
    }

    /// Write every relocated copy for a trampoline mapped at `tramp`, the program being
    /// loaded at `bias`. (The runtime's trampoline: the copies, `out`, then the hook entry's
    /// address, 8 bytes, then a stub per site: a chained site's copy goes on to the next's.)
    pub fn write_copies(&self, bias: u64, tramp: u64, out: &mut [u8]) -> Result<(), String> {
        let stubs = tramp + out.len() as u64 + 8;
        for (i, s) in self.sites.iter().enumerate() {
            let off = s.site.copy_off as usize;
            let then = (s.site.flags & site_flags::CHAINED != 0)
                .then(|| stubs + ((i + 1) * self.decoder.stub_len()) as u64);
            let code = self.decoder.relocate(s, bias, tramp + off as u64, then)?;
            out.get_mut(off..off + code.len())
                .ok_or("the channel's code area is too small (overwritten?)")?
                .copy_from_slice(&code);
        }
        Ok(())
    }

    /// The site whose copy contains `pc` (an address in the trampoline at `tramp`).
    pub fn site_of_copy(&self, tramp: u64, pc: u64) -> Option<&DecodedSite> {
        let off = pc.checked_sub(tramp)? as usize;
        self.sites.get(off / self.stride)
    }
}

/// A site chained to the next ([`site_flags::CHAINED`]) whose next site in the plan is not the
/// one its patch ends in, as the decoder left it (a hook took that one's place): its patch
/// then covers what its copy runs only (shorter than a jump: a trap).
fn unchain_from_hooks(sites: &mut [DecodedSite]) {
    for i in 0..sites.len() {
        let s = &sites[i].site;
        if s.flags & site_flags::CHAINED == 0 {
            continue;
        }
        let runs = sites[i].bytes.len();
        let next = s.offset + runs as u64;
        let intact = (sites.get(i + 1))
            .is_some_and(|n| n.site.offset == next && site_kind::chainable(n.site.kind));
        if !intact {
            let s = &mut sites[i].site;
            s.flags &= !site_flags::CHAINED;
            s.len = runs as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(offset: u64, kind: u8, len: u8, runs: usize, flags: u8) -> DecodedSite {
        DecodedSite {
            site: Site {
                offset,
                kind,
                len,
                flags,
                ..Site::default()
            },
            bytes: vec![0x90; runs],
        }
    }

    #[test]
    fn a_chain_into_a_hook_is_undone() {
        let chained = || site(0x1000, site_kind::STORE, 8, 4, site_flags::CHAINED);
        let mut sites = vec![chained(), site(0x1004, site_kind::STORE, 4, 4, 0)];
        unchain_from_hooks(&mut sites);
        assert_eq!(
            (sites[0].site.len, sites[0].site.flags),
            (8, site_flags::CHAINED)
        );
        // the next site became a hook, or is missing
        for next in [vec![site(0x1004, site_kind::ERROR_CALL, 4, 4, 0)], vec![]] {
            let mut sites = vec![chained()];
            sites.extend(next);
            unchain_from_hooks(&mut sites);
            assert_eq!((sites[0].site.len, sites[0].site.flags), (4, 0));
        }
    }
}
