//! The engine as a library that the runtime loads into the program's fork server, so that the
//! worker can run a whole exploration itself (`smc_run::target::in_worker`).
//!
//! It lives in the program's process, whose heap every execution puts back: everything it
//! allocates comes from mappings of its own (dlmalloc over raw `mmap` system calls: the runtime
//! interposes the program's `mmap`), and the runtime leaves its data out of the snapshot.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, Ordering};

use smc_run::target::in_worker::{self, EngineOps};

/// Pages straight from the kernel.
struct Pages;

// SAFETY: hands out fresh anonymous mappings, and takes back only what it handed out.
unsafe impl dlmalloc::Allocator for Pages {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        // SAFETY: a plain mmap system call for fresh memory.
        let p = unsafe {
            libc::syscall(
                libc::SYS_mmap,
                0usize,
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1i64,
                0usize,
            )
        };
        if p == -1 {
            (std::ptr::null_mut(), 0, 0)
        } else {
            (p as *mut u8, size, 0)
        }
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        std::ptr::null_mut()
    }

    fn free_part(&self, ptr: *mut u8, old: usize, new: usize) -> bool {
        // SAFETY: the tail of a mapping this allocator made.
        unsafe { libc::syscall(libc::SYS_munmap, ptr.add(new), old - new) == 0 }
    }

    fn free(&self, ptr: *mut u8, size: usize) -> bool {
        // SAFETY: a mapping this allocator made.
        unsafe { libc::syscall(libc::SYS_munmap, ptr, size) == 0 }
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        true
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        4096
    }
}

/// The library's global allocator. The worker runs one thread; the lock is for form's sake.
struct Heap {
    lock: AtomicBool,
    dl: UnsafeCell<dlmalloc::Dlmalloc<Pages>>,
}

// SAFETY: every access to `dl` holds `lock`.
unsafe impl Sync for Heap {}

impl Heap {
    fn with<R>(&self, f: impl FnOnce(&mut dlmalloc::Dlmalloc<Pages>) -> R) -> R {
        while self.lock.swap(true, Ordering::Acquire) {
            std::hint::spin_loop();
        }
        // SAFETY: the lock is held.
        let r = f(unsafe { &mut *self.dl.get() });
        self.lock.store(false, Ordering::Release);
        r
    }
}

// SAFETY: dlmalloc returns blocks of the requested size and alignment.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        self.with(|d| d.malloc(l.size(), l.align()))
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        self.with(|d| d.calloc(l.size(), l.align()))
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        self.with(|d| d.free(p, l.size(), l.align()))
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        self.with(|d| d.realloc(p, l.size(), l.align(), new))
    }
}

#[global_allocator]
static HEAP: Heap = Heap {
    lock: AtomicBool::new(false),
    dl: UnsafeCell::new(dlmalloc::Dlmalloc::new_with_allocator(Pages)),
};

thread_local! {
    static TOUCHED: Cell<bool> = const { Cell::new(false) };
}

/// Called by the fork server once the library is loaded, before any worker's snapshot: the
/// first use of a dlopened library's thread-local storage makes the loader allocate it (with
/// the program's malloc), which must happen before the snapshot, not in an execution.
#[no_mangle]
pub extern "C" fn smc_engine_init() {
    TOUCHED.with(|t| t.set(true));
}

/// The build this library belongs to (`SMC_BUILD_ID`, as a number).
#[no_mangle]
pub extern "C" fn smc_engine_build() -> u64 {
    u64::from_str_radix(in_worker::BUILD_ID, 16).unwrap_or(0)
}

/// Run the exploration the checker asked for in the area `area_fd` with the runtime's `ops`;
/// 0 when the area holds the answer.
///
/// # Safety
/// Called by the runtime in the worker, between executions, with its operations.
#[no_mangle]
pub unsafe extern "C" fn smc_engine_explore(ops: *const EngineOps, area_fd: i32) -> i32 {
    if ops.is_null() {
        return 2;
    }
    // SAFETY: the runtime's operations, valid for the call.
    std::panic::catch_unwind(|| unsafe { in_worker::serve(&*ops, area_fd) }).unwrap_or(2)
}
