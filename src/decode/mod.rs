//! The arch-neutral face of instruction decoding: what an instrumented site is, and the
//! interface every architecture (under targets/) implements.

use crate::program::CodeSection;
use crate::site::Site;

/// One instruction of the program that may touch shared memory (or is a fence).
#[derive(Clone, Debug)]
pub struct DecodedSite {
    /// The wire description; `offset` holds the instruction's file virtual address and
    /// `copy_off` is filled in by the instrumentation plan.
    pub site: Site,
    /// The instruction's bytes, to relocate its out-of-line copy (and to disassemble it for
    /// an error message: formatting every site up front cost a tenth of a short check).
    pub bytes: Vec<u8>,
}

/// What decoding one code section found.
#[derive(Clone, Debug, Default)]
pub struct DecodedSection {
    pub sites: Vec<DecodedSite>,
    /// Some instruction of the section uses registers beyond the general ones and the basic
    /// vector ones (x86-64: x87, MMX, AVX or AVX-512 state). Without any, the program never
    /// holds a live value there across a hook, and the hook saves less (targets/x86_64/hook.h).
    pub wide_state: bool,
}

/// What a memory access depends on (herd's `addr`, `data`, `ctrl`, `ctrlisync`): the loads
/// before it in its function, by their addresses, whose latest execution the value flows from
/// through registers. Found by the instruction set's analysis where it has one (ppc64le,
/// for the POWER model); it may miss a dependency, never invent one.
///
/// And, for the exploration, what it *may* depend on: the loads of its function whose values
/// may decide whether it runs, its address or what it stores (`may`: their latest executions,
/// `may_earlier`: the ones before), where that is all of
/// it: `precise_in` names the function, which must be its thread's start routine (run once,
/// with no earlier read of the thread). Without it, it may depend on every earlier read of
/// its thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteDependencies {
    pub addr: Vec<u64>,
    pub data: Vec<u64>,
    pub ctrl: Vec<u64>,
    pub ctrlisync: Vec<u64>,
    pub may: Vec<u64>,
    /// Loads whose earlier executions (not the latest before the access) it may depend on.
    pub may_earlier: Vec<u64>,
    pub precise_in: Option<u64>,
}

/// What the checker needs to know about one instruction set.
pub trait Decoder: Sync {
    /// Find and classify the sites of one code section; with `private`, also those whose
    /// operand is the thread's own stack or TLS (`site_flags::PRIVATE`), which a program needs
    /// only once some of that memory is shared between threads. Without them the plan is
    /// exactly what it was before they existed (the patches of short sites may then span the
    /// private accesses after them).
    fn decode(&self, section: &CodeSection, private: bool) -> DecodedSection;
    /// A site of `kind` for the one instruction at address `addr` of `section` (a function's
    /// entry), whatever it does; None when no instruction decodes there.
    fn site_at(&self, section: &CodeSection, addr: u64, kind: u8) -> Option<DecodedSite>;
    /// The addresses of the return instructions in `[lo, hi)` of `section` (a function).
    fn returns_in(&self, section: &CodeSection, lo: u64, hi: u64) -> Vec<u64>;
    /// Where a function in [lo, hi) of `section` may leave: its returns and its jumps that may
    /// land outside it (tail calls; indirect jumps too). `None` where one of them cannot be
    /// hooked (a direct jump out: its copy could not run it), or where the instruction set has
    /// no such analysis.
    fn exits_in(&self, section: &CodeSection, lo: u64, hi: u64) -> Option<Vec<u64>> {
        let _ = (section, lo, hi);
        None
    }
    /// Bytes that run the site's instruction at address `at` and then jump back after the
    /// original, for the program loaded with `bias` added to its file addresses; or, given
    /// `then`, to that address instead (a site chained to the next one: its stub). At most
    /// [`Decoder::copy_stride`] bytes.
    fn relocate(
        &self,
        site: &DecodedSite,
        bias: u64,
        at: u64,
        then: Option<u64>,
    ) -> Result<Vec<u8>, String>;
    /// Bytes of each site's stub in the runtime's trampoline (`SMC_HOOK_STUB_LEN`).
    fn stub_len(&self) -> usize;
    /// Room reserved for each relocated copy.
    fn copy_stride(&self) -> usize;
    /// The site's instruction as assembly, for messages.
    fn disassemble(&self, site: &DecodedSite) -> String;
    /// The dependencies of the memory accesses of `section` on its loads, by the access's
    /// address (none where the instruction set has no such analysis).
    fn dependencies(
        &self,
        section: &CodeSection,
    ) -> std::collections::BTreeMap<u64, SiteDependencies> {
        let _ = section;
        std::collections::BTreeMap::new()
    }
}
