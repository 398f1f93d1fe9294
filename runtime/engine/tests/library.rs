//! The engine library is what the checker built with it: the checker refuses a library of
//! another build, so a stale one would silently cost the engine inside the worker.

use std::ffi::CString;

#[test]
fn the_library_exports_the_engine_of_this_build() {
    // Integration tests sit beside the library in target/<profile>/deps.
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libsmc_engine.so");
    assert!(lib.exists(), "{} was not built", lib.display());
    let path = CString::new(lib.to_str().unwrap()).unwrap();
    // SAFETY: loading our own library; its initialisers allocate nothing.
    let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    assert!(!h.is_null(), "dlopen {} failed", lib.display());
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
    let ours = u64::from_str_radix(smc_run::target::in_worker::BUILD_ID, 16).unwrap();
    assert_eq!(build(), ours);
}
