//! An instrumented instruction as the decoder finds it and the runtime patches and decodes it:
//! what kind of access it is, how its address is formed, where its relocated copy lives. The
//! layout is the wire format of `struct smc_site` in runtime/channel.h (checked by
//! tests/channel_layout.rs); the channel carries an array of them to the runtime.

/// What a site does (`Site::kind`).
pub mod site_kind {
    pub const LOAD: u8 = 1;
    pub const STORE: u8 = 2;
    pub const RMW: u8 = 3;
    pub const ATOMIC: u8 = 4;
    pub const CAS: u8 = 5;
    pub const CAS2: u8 = 6;
    pub const FENCE: u8 = 7;
    pub const UNSUPPORTED: u8 = 8;
    /// A string instruction (`movs`, `stos`, `lods`, `cmps`, `scas`, with or without a `rep`
    /// prefix): the runtime carries it out itself, as 8-byte-word pieces (`Site::string_op`).
    pub const STRING: u8 = 9;
    /// The first instruction of a function the program defines that is an error call by
    /// convention (`reach_error`, `__VERIFIER_error`; `Site::size` says which, see
    /// `error_call`): reaching it is an error.
    pub const ERROR_CALL: u8 = 10;
    /// The first instruction of a function named `__VERIFIER_atomic_*` (SV-COMP: the whole
    /// function is atomic): a section begins.
    pub const ATOMIC_ENTRY: u8 = 11;
    /// A `ret` of such a function: the section ends.
    pub const ATOMIC_EXIT: u8 = 12;
    /// The first instruction of a library function the runtime carries out itself
    /// (`Site::size` says which, [`super::MODELLED_CALLS`]); its copy returns to the caller.
    pub const MODELLED: u8 = 13;
    /// The first instruction of a library function whose accesses are no events
    /// ([`super::UNSEEN_FUNCTIONS`]): the thread runs unseen until it leaves the function.
    pub const UNSEEN_ENTRY: u8 = 14;
    /// A `ret` or a tail jump of such a function: seen again, where the stack is as at its
    /// entry (a jump inside the function, with its frame still on the stack, is no exit).
    pub const UNSEEN_EXIT: u8 = 15;

    /// May a site of this kind be chained to the next, or the next to it
    /// ([`super::site_flags::CHAINED`])? Plain accesses only, which the hook reports and the
    /// copy then carries out.
    pub fn chainable(kind: u8) -> bool {
        matches!(kind, LOAD | STORE | RMW)
    }
}

/// Functions whose whole body is atomic (SV-COMP), by this prefix of their name.
pub const ATOMIC_FUNCTION_PREFIX: &str = "__VERIFIER_atomic_";

/// `Site::size` of a `site_kind::ERROR_CALL` site: the function, by its index here.
pub const ERROR_CALLS: [&str; 2] = ["reach_error", "__VERIFIER_error"];

/// The `Site::size` of the `ERROR_CALL` hook at Rust's `__rust_start_panic`, which std calls
/// once the panic hook has written the message (runtime/channel.h `SMC_ERROR_CALL_PANIC`).
pub const ERROR_CALL_PANIC: u32 = 2;

/// Rust's `__rust_start_panic`, as std's internal symbols are named (demangled).
pub const RUST_START_PANIC: [&str; 2] = ["__rust_start_panic", "__rustc::__rust_start_panic"];

/// Library functions the runtime carries out itself (`site_kind::MODELLED`), by their demangled
/// names in the versions of std that have them, with the `Site::size` that names the model
/// (runtime/channel.h `SMC_MODELLED_*`). std's futex `Mutex::lock_contended(&self)`, the slow
/// path of a lock whose inlined compare-exchange found the word taken: it spins, swaps and
/// sleeps on the word, so that each unlock lands in one of several places among those steps,
/// every one of them another execution; modelled, it waits until the word is free and takes
/// it (runtime/trap.c `rust_mutex_lock_contended`).
pub const MODELLED_CALLS: [(&[&str], u32); 1] = [(
    &[
        "<std::sys::sync::mutex::futex::Mutex>::lock_contended",
        "<std::sys::pal::unix::locks::futex_mutex::Mutex>::lock_contended",
        "<std::sys::unix::locks::futex_mutex::Mutex>::lock_contended",
    ],
    MODELLED_RUST_MUTEX_LOCK,
)];

/// Library functions whose accesses are no events (`site_kind::UNSEEN_ENTRY`), by their
/// demangled names: Rust std's map from each thread to its stack's guard page, which std's
/// SIGSEGV handler alone reads (to name the thread whose stack overflowed), and every thread
/// updates under one lock as it starts and ends. Explored, the updates' orders multiplied each
/// program's executions by the orders of its threads' starts and ends (two empty scoped
/// threads: no end after 80,000 executions); they cannot change what the program computes. The
/// function runs as one step of its thread, on memory only such functions touch.
pub const UNSEEN_FUNCTIONS: [&[&str]; 3] = [
    &["std::sys::pal::unix::stack_overflow::thread_info::set_current_info"],
    &["std::sys::pal::unix::stack_overflow::thread_info::delete_current_info"],
    // (where the deletion is inlined into it; its alternate stack's release is the runtime's)
    &["std::sys::pal::unix::stack_overflow::imp::drop_handler"],
];

/// The `Site::size` of a `site_kind::MODELLED` site at std's futex `Mutex::lock_contended`.
pub const MODELLED_RUST_MUTEX_LOCK: u32 = 0;

/// `Site::string_op` of a `site_kind::STRING` site: which instruction (its element size is
/// `Site::size`).
pub mod string_op {
    pub const MOVS: u8 = 1;
    pub const STOS: u8 = 2;
    pub const LODS: u8 = 3;
    pub const CMPS: u8 = 4;
    pub const SCAS: u8 = 5;
}

/// `Site::rep` of a string site.
pub mod rep_prefix {
    pub const NONE: u8 = 0;
    /// `rep` / `repe` (f3)
    pub const REPE: u8 = 1;
    /// `repne` (f2; on `movs`, `stos` and `lods` the same as `rep`)
    pub const REPNE: u8 = 2;
}

/// `Site::flags`.
pub mod site_flags {
    /// The operand is the thread's own stack (rsp-based) or thread-local storage (fs-based):
    /// the runtime patches the site only when some stack or TLS memory is shared between
    /// threads (`Options::shared`), and the access is visible only where it touches that
    /// memory.
    pub const PRIVATE: u8 = 1;
    /// The operand is fs-based: its address adds the thread pointer.
    pub const FS: u8 = 2;
    /// POWER's load-reserve (a `LOAD`: the runtime remembers the address and what it read) or
    /// store-conditional (a `CAS`: it writes if memory still holds what the load-reserve read,
    /// as qemu decides it).
    pub const RESERVE: u8 = 4;
    /// The site's patch covers the start of the next site (x86-64: both are shorter than a
    /// jump), which the patch's copy goes on to through that site's stub: that site keeps no
    /// patch of its own where this one's is a jump.
    pub const CHAINED: u8 = 8;
}

/// `Site::spin_value`: what the counter is set to (runtime/channel.h `SMC_SPIN_*`).
pub mod spin_value {
    pub const ZERO: u8 = 0;
    pub const ONE: u8 = 1;
    /// All ones in the low 32 bits (-1 of a 32-bit counter).
    pub const ALL_ONES_32: u8 = 2;
    pub const ALL_ONES_64: u8 = 3;
}

/// `Site::base` / `Site::index`: no register.
pub const REG_NONE: u8 = 0xff;
/// `Site::base`: the instruction pointer (RIP-relative).
pub const REG_RIP: u8 = 0xfe;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Site {
    pub offset: u64,
    pub disp: i64,
    pub copy_off: u32,
    pub size: u32,
    pub kind: u8,
    pub len: u8,
    pub base: u8,
    pub index: u8,
    pub scale: u8,
    pub addr32: u8,
    pub orig: u8,
    /// `site_flags`: how the operand is private to the thread.
    pub flags: u8,
    pub dead_regs: u16,
    /// `string_op` of a string site, else 0.
    pub string_op: u8,
    /// `rep_prefix` of a string site.
    pub rep: u8,
    /// A bounded spin loop's load (targets/x86_64/spin/): the counter register's number + 1
    /// (0: none), which the runtime sets to `spin_value` at the load so that the loop ends
    /// after it.
    pub spin_reg: u8,
    pub spin_value: u8,
    /// The load of an await loop with a backoff (targets/x86_64/spin/): registers its await
    /// hash leaves out, as the loop carries them between iterations but never lets them out
    /// (bit n = register n).
    pub await_mask: u16,
}
