//! The engine as a library that the runtime loads into the program's fork server, so that the
//! worker can run a whole exploration itself (`smc_run::supervisor::in_worker`).
//!
//! It lives in the program's process, whose heap every execution puts back: everything it
//! allocates comes from mappings of its own (dlmalloc over raw `mmap` system calls: the runtime
//! interposes the program's `mmap`), and the runtime leaves its data out of the snapshot.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, Ordering};

use smc_run::supervisor::in_worker::{self, EngineOps};

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

/// Small blocks freed by the engine, kept for the next allocation of their size class (the
/// engine allocates and frees the same small sizes at every step: dlmalloc alone was ~8% of an
/// exploration's samples, ~3% with these lists).
const CLASS: usize = 16;
const CLASSES: usize = 64; // blocks of up to 1 KiB
const KEPT_BYTES: usize = 64 << 10; // per class, at most: 4 MiB in all

struct Lists {
    dl: dlmalloc::Dlmalloc<Pages>,
    /// Per class: the first free block (its first word points to the next) and how many.
    free: [(*mut u8, usize); CLASSES],
}

/// The size class of a small block, if it is one.
fn class_of(l: Layout) -> Option<usize> {
    (l.size() <= CLASS * CLASSES && l.align() <= CLASS).then(|| l.size().max(1).div_ceil(CLASS) - 1)
}

/// The library's global allocator. The worker runs one thread: the lock is for form's sake,
/// and taken with plain loads and stores, not a locked exchange (~20 cycles per allocation and
/// per free, 2-5% of an exploration's cycles).
struct Heap {
    lock: AtomicBool,
    lists: UnsafeCell<Lists>,
}

// SAFETY: the library's code runs on the worker's one thread only (the runtime calls it from
// there), and every access to `lists` holds `lock` (a re-entry would wait on it for good).
unsafe impl Sync for Heap {}

impl Heap {
    fn with<R>(&self, f: impl FnOnce(&mut Lists) -> R) -> R {
        while self.lock.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
        self.lock.store(true, Ordering::Relaxed);
        // SAFETY: the lock is held.
        let r = f(unsafe { &mut *self.lists.get() });
        self.lock.store(false, Ordering::Release);
        r
    }
}

// SAFETY: dlmalloc returns blocks of the requested size and alignment; a kept block of a class
// was allocated with the class's size and alignment, and is handed out for that class only.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        self.with(|h| match class_of(l) {
            Some(c) if !h.free[c].0.is_null() => {
                let p = h.free[c].0;
                h.free[c] = (*(p as *mut *mut u8), h.free[c].1 - 1);
                p
            }
            Some(c) => h.dl.malloc((c + 1) * CLASS, CLASS),
            None => h.dl.malloc(l.size(), l.align()),
        })
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        self.with(|h| match class_of(l) {
            Some(c) if (h.free[c].1 + 1) * (c + 1) * CLASS <= KEPT_BYTES => {
                *(p as *mut *mut u8) = h.free[c].0;
                h.free[c] = (p, h.free[c].1 + 1);
            }
            Some(c) => h.dl.free(p, (c + 1) * CLASS, CLASS),
            None => h.dl.free(p, l.size(), l.align()),
        })
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let to = Layout::from_size_align_unchecked(new, l.align());
        if class_of(l).is_none() && class_of(to).is_none() {
            return self.with(|h| h.dl.realloc(p, l.size(), l.align(), new));
        }
        let q = self.alloc(to);
        if !q.is_null() {
            std::ptr::copy_nonoverlapping(p, q, l.size().min(new));
            self.dealloc(p, l);
        }
        q
    }
}

#[global_allocator]
static HEAP: Heap = Heap {
    lock: AtomicBool::new(false),
    lists: UnsafeCell::new(Lists {
        dl: dlmalloc::Dlmalloc::new_with_allocator(Pages),
        free: [(std::ptr::null_mut(), 0); CLASSES],
    }),
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

/// Run the exploration the checker asked for in the shared area the runtime mapped at `area`
/// with the runtime's `ops`; 0 when the area holds the answer.
///
/// # Safety
/// Called by the runtime in the worker, between executions, with its operations.
#[no_mangle]
pub unsafe extern "C" fn smc_engine_explore(ops: *const EngineOps, area: *mut u8) -> i32 {
    if ops.is_null() {
        return 2;
    }
    // SAFETY: the runtime's operations, valid for the call.
    std::panic::catch_unwind(|| unsafe { in_worker::serve(&*ops, area) }).unwrap_or(2)
}
