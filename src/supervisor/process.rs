//! The checker's side of processes and CPUs: interruption, CPU pinning, reaping what a program
//! left behind, temporary directories. The only other module that starts or waits for
//! processes is this one's parent.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Ask every wait of this module to give up (from a SIGINT/SIGTERM handler).
pub fn interrupt() {
    INTERRUPTED.store(true, SeqCst);
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(SeqCst)
}

/// The CPUs the calling thread may run on, in order.
pub fn thread_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the set it is given; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Run the calling thread on `cpu` only; the programs it starts inherit that. A supervisor and
/// its program on one CPU hand over in a few microseconds; on two, every hand-off wakes a
/// sleeping CPU (tens of microseconds on a VM). So one check uses one CPU, and `-j N` N of them.
pub fn pin_thread(cpu: usize) {
    // SAFETY: as above; a failure (a CPU taken away meanwhile) leaves the thread unpinned.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The CPU the calling thread runs on now, if it may run there.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: plain syscall wrapper.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// Become the subreaper of the processes we start: a worker whose fork server dies before it
/// becomes our child, so that we can wait until it is gone (`reap_orphans`).
pub(super) fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: a process attribute; orphans of other children become ours too, and are left as
    // they are (the checker starts no other long-lived processes).
    ONCE.call_once(|| unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    });
}

/// Kill and reap our children in process group `pgid` but its leader, which has exited and is
/// not reaped (so no other group can have that number meanwhile).
pub(super) fn reap_orphans(pgid: i32, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        // SAFETY: getpgid of a child of ours, which only we can reap.
        let orphans: Vec<i32> = children()
            .into_iter()
            .filter(|&p| p != pgid && unsafe { libc::getpgid(p) } == pgid)
            .collect();
        if orphans.is_empty() {
            return;
        }
        for p in orphans {
            // SAFETY: `p` is our child in our group, not reaped: its PID is not reused.
            unsafe { libc::kill(p, libc::SIGKILL) };
            // SAFETY: waits for our own child; no status wanted.
            while unsafe { libc::waitpid(p, std::ptr::null_mut(), libc::WNOHANG | libc::__WALL) }
                == 0
            {
                if Instant::now() > deadline {
                    return;
                }
                std::thread::sleep(Duration::from_micros(500));
            }
        }
    }
}

/// The PIDs of this process's children (of all its threads; an orphan is given to one of them).
fn children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// Wait up to `limit` for child `pid` to end, leaving it a zombie (its PID and process group
/// reserved). On a pidfd when the kernel has them (the end is seen at once; polling would add
/// up to a poll period to every check).
pub(super) fn wait_exited_unreaped(pid: i32, limit: Duration) {
    let deadline = Instant::now() + limit;
    // SAFETY: pidfd_open takes a PID and flags; the descriptor is ours and closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    while !exited_unreaped(pid) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        if fd < 0 {
            std::thread::sleep(left.min(Duration::from_millis(1)));
            continue;
        }
        // SAFETY: one pollfd, valid for the call.
        let r = unsafe { libc::poll(&mut p, 1, left.as_millis() as i32) };
        let interrupted =
            r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
        if r == 0 || (r < 0 && !interrupted) {
            break;
        }
    }
    if fd >= 0 {
        // SAFETY: the pidfd opened above.
        unsafe { libc::close(fd) };
    }
}

/// Whether child `pid` has ended; it stays a zombie (its PID and process group reserved).
fn exited_unreaped(pid: i32) -> bool {
    // SAFETY: waitid writes only into `info`; WNOWAIT leaves the child to be reaped later.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) != 0
            || info.si_pid() != 0
    }
}

/// A temporary directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Result<TempDir, String> {
        let mut template = std::env::temp_dir()
            .join("smc-run.XXXXXX")
            .into_os_string()
            .into_encoded_bytes();
        template.push(0);
        // SAFETY: template is a NUL-terminated writable buffer, as mkdtemp requires.
        let p = unsafe { libc::mkdtemp(template.as_mut_ptr() as *mut libc::c_char) };
        if p.is_null() {
            return Err(format!(
                "cannot create a temporary directory: {}",
                std::io::Error::last_os_error()
            ));
        }
        template.pop();
        // SAFETY: the bytes came from an OsString plus the suffix mkdtemp wrote (ASCII).
        Ok(TempDir(PathBuf::from(unsafe {
            OsString::from_encoded_bytes_unchecked(template)
        })))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
