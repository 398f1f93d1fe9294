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
    pub pad2: u16,
    pub pad3: u32,
}
