//! Architecture specifics, each behind the [`crate::decode::Decoder`] interface (Rust) and an
//! `arch.h` for the runtime (C).

pub mod x86_64;

use crate::decode::Decoder;
use crate::program::Arch;

pub fn decoder(arch: Arch) -> Option<&'static dyn Decoder> {
    match arch {
        Arch::X86_64 => Some(&x86_64::X86_64),
        Arch::Ppc64le => None,
    }
}
