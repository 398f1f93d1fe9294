//! The engine library embedded in the checker is the one of this build: the checker refuses a
//! library of another build, which would silently cost the engine inside the worker.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::AsRawFd;

#[test]
fn the_embedded_library_exports_the_engine_of_this_build() {
    let image = smc_run::supervisor::engine_image();
    assert!(image.len() > 4096, "no engine library embedded");
    let mut f = smc_run::channel::memfd(c"engine-test", libc::MFD_CLOEXEC).unwrap();
    f.write_all(image).unwrap();
    let path = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd())).unwrap();
    // SAFETY: loading our own library; its initialisers allocate nothing.
    let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    assert!(!h.is_null(), "dlopen of the embedded engine library failed");
    for sym in [
        c"smc_engine_init",
        c"smc_engine_explore",
        c"smc_engine_build",
    ] {
        // SAFETY: dlsym on a live handle.
        assert!(
            !unsafe { libc::dlsym(h, sym.as_ptr()) }.is_null(),
            "{sym:?} missing"
        );
    }
    // SAFETY: the symbol is `extern "C" fn() -> u64`.
    let build: extern "C" fn() -> u64 =
        unsafe { std::mem::transmute(libc::dlsym(h, c"smc_engine_build".as_ptr())) };
    let ours = u64::from_str_radix(smc_run::supervisor::in_worker::BUILD_ID, 16).unwrap();
    assert_eq!(build(), ours);
}
