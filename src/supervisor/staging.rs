//! What the checker carries inside itself and stages for the program it starts: the runtime
//! (one per instruction set), the SV-COMP stub library, the engine library, the memfds the
//! program finds them and its output in, and qemu-user for a ppc64le program.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use super::OUTPUT_CAP;
use crate::channel::memfd;
use crate::program::Arch;

/// The runtime, built by build.rs and carried inside the checker.
static RUNTIME_IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libsmc_rt.so"));
/// The ppc64le runtime: empty where the checker was built without the cross compiler.
static RUNTIME_IMAGE_PPC64LE: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/libsmc_rt_ppc64le.so"));
/// The SV-COMP stub library for ppc64le programs (empty like the runtime).
pub static VERIFIER_STUB_PPC64LE: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/libsmc_verifier_ppc64le.so"));

/// What a ppc64le program needs on this machine, as Debian names the packages.
pub const PPC64LE_PACKAGES: &str = "gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross qemu-user";

/// How a ppc64le program is run: qemu-user (`SMC_QEMU`, else `qemu-ppc64le` on the PATH) with
/// the cross C library's root as its prefix for the loader and libraries (`SMC_PPC64LE_ROOT`,
/// else Debian's /usr/powerpc64le-linux-gnu).
pub struct Emulator {
    pub qemu: PathBuf,
    pub root: PathBuf,
}

impl Emulator {
    /// The emulator, or why a ppc64le program cannot run here.
    pub fn find() -> Result<Emulator, String> {
        let missing = |what: &str| {
            format!(
                "a ppc64le program needs {what} on this machine (Debian: apt-get install \
                 {PPC64LE_PACKAGES})"
            )
        };
        ppc64le_built()?;
        let qemu = match std::env::var_os("SMC_QEMU") {
            Some(q) => PathBuf::from(q),
            None => find_in_path("qemu-ppc64le").ok_or_else(|| missing("qemu-ppc64le"))?,
        };
        let root = std::env::var_os("SMC_PPC64LE_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/powerpc64le-linux-gnu"));
        if !root.join("lib").is_dir() {
            return Err(missing(&format!(
                "the ppc64le C library in {}",
                root.display()
            )));
        }
        Ok(Emulator { qemu, root })
    }
}

/// Whether this checker carries its ppc64le runtime (and stub library), or why not.
pub fn ppc64le_built() -> Result<(), String> {
    if RUNTIME_IMAGE_PPC64LE.is_empty() || VERIFIER_STUB_PPC64LE.is_empty() {
        return Err(format!(
            "this smc-run was built without its ppc64le runtime (no powerpc64le-linux-gnu-gcc \
             at build time): apt-get install {PPC64LE_PACKAGES}, then build smc-run again"
        ));
    }
    Ok(())
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The SV-COMP stub library (see runtime/smc_verifier.h).
pub static VERIFIER_STUB: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libsmc_verifier.so"));
pub static VERIFIER_HEADER: &str = include_str!("../../runtime/smc_verifier.h");
/// The engine library (runtime/engine), built by build.rs with the same sources and carried
/// inside the checker too: an installed or copied `smc-run` runs at full speed on its own.
static ENGINE_IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libsmc_engine.so"));

/// The embedded engine library as a file the program's runtime can `dlopen`: a memfd written
/// once per checker and named through our pid (the program opens it through /proc, so it
/// inherits no descriptor). `None` when `SMC_NO_WORKER_ENGINE` is set (diagnosis, A/B), or
/// when this build carries no engine (the nested build of the library itself).
pub fn engine_library() -> Option<PathBuf> {
    static LIBRARY: std::sync::OnceLock<Option<File>> = std::sync::OnceLock::new();
    if std::env::var_os("SMC_NO_WORKER_ENGINE").is_some() || ENGINE_IMAGE.is_empty() {
        return None;
    }
    let file = LIBRARY.get_or_init(|| {
        let mut f = memfd(c"smc-engine", libc::MFD_CLOEXEC).ok()?;
        f.write_all(ENGINE_IMAGE).ok()?;
        Some(f)
    });
    let fd = file.as_ref()?.as_raw_fd();
    Some(PathBuf::from(format!(
        "/proc/{}/fd/{fd}",
        std::process::id()
    )))
}

/// The embedded engine library's bytes (for tests that load it themselves).
pub fn engine_image() -> &'static [u8] {
    ENGINE_IMAGE
}

/// A memfd of fixed size to capture stdout and stderr: sealed against growing, so a program
/// that floods its output cannot fill memory (its writes past the end fail).
pub(super) fn output_memfd() -> std::io::Result<File> {
    let f = memfd(
        c"smc-run-output",
        libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
    )?;
    f.set_len(OUTPUT_CAP)?;
    let seals = libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: plain fcntl on our descriptor.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(f)
}

/// The runtime of `arch` as a memfd the program preloads, written once per checker: every
/// process of a check preloads it under the same name. The loader keeps that name with its
/// record of the object, allocated before the main thread's TLS: a name one digit longer (a
/// later descriptor) moved the TLS, and a worker's error replayed by the checker then read
/// thread-locals at other addresses ("behaved differently").
pub(super) fn runtime_memfd(arch: Arch) -> std::io::Result<&'static File> {
    static STAGED: [std::sync::OnceLock<File>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    let (cell, image) = match arch {
        Arch::X86_64 => (&STAGED[0], RUNTIME_IMAGE),
        Arch::Ppc64le => (&STAGED[1], RUNTIME_IMAGE_PPC64LE),
    };
    if let Some(f) = cell.get() {
        return Ok(f);
    }
    let mut f = memfd(c"smc-runtime", libc::MFD_CLOEXEC)?;
    f.write_all(image)?;
    Ok(cell.get_or_init(|| f))
}
