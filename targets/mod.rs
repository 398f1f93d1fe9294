//! Architecture specifics, each behind the [`crate::decode::Decoder`] interface (Rust) and an
//! `arch.h` for the runtime (C).

pub mod ppc64le;
pub mod x86_64;

use crate::decode::Decoder;
use crate::litmus::Isa;
use crate::program::Arch;

/// Architectures of the litmus tests smc-run can generate programs for.
pub const LITMUS_ARCHS: [&str; 2] = ["X86", "PPC"];

/// The instruction syntax of litmus tests for `arch` (the name on a test's first line).
pub fn litmus_isa(arch: &str) -> Option<&'static dyn Isa> {
    match arch {
        "X86" => Some(&x86_64::litmus::X86),
        "PPC" => Some(&ppc64le::litmus::Ppc),
        _ => None,
    }
}

pub fn decoder(arch: Arch) -> Option<&'static dyn Decoder> {
    match arch {
        Arch::X86_64 => Some(&x86_64::X86_64),
        Arch::Ppc64le => Some(&ppc64le::Ppc64le),
    }
}
