//! Process control for the program: starts it with the runtime preloaded (a ppc64le one under
//! qemu-user; what is staged for it in `staging.rs`), completes the start-up handshake, and
//! drives executions through the fork server.
//!
//! Architecture invariant: this is the only module that starts, signals or waits for
//! processes of the program under test. Every process it starts is in one process group
//! that dies with the checker (PR_SET_PDEATHSIG) and is killed by PID when it is dropped.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::{Duration, Instant};

use crate::channel::{self, coroutines, err, futex_wait, futex_wake, init, slot_state, Channel};
use crate::engine::{self, ExecError, Executor, Snapshot};
use crate::event::{Reply, ScriptStep};
use crate::instrument::Plan;
use crate::program::{Arch, Program};
use crate::results::{Observation, Outcome, Output};

pub mod in_worker;
mod process;
mod read;
mod replayed;
use replayed::Replayed;
mod staging;
use process::{become_subreaper, reap_orphans, wait_exited_unreaped};
pub use process::{current_cpu, interrupt, interrupted, pin_thread, thread_cpus, TempDir};
pub use read::ChannelReader;
pub use staging::{
    engine_image, engine_library, ppc64le_built, PPC64LE_PACKAGES, VERIFIER_HEADER, VERIFIER_STUB,
    VERIFIER_STUB_PPC64LE,
};
use staging::{output_memfd, runtime_memfd, Emulator};

/// Supervisor spins before sleeping while the program runs on another CPU (2000 spins: 785
/// executions/s on the benchmark subset, 20000: 817, 200: 376).
const SPINS: u32 = 20000;
/// How long a step that hung in an earlier execution with the same prefix runs before its
/// thread is set aside again: it computes what it computed then, past the time limit.
pub(crate) const HANG_AGAIN: Duration = Duration::from_millis(5);
/// Yields to the program before sleeping when both share one CPU.
const YIELDS: u32 = 10;

pub struct Options {
    pub args: Vec<std::ffi::OsString>,
    /// Wall-clock limit of one execution.
    pub exec_timeout: Duration,
    pub fences_visible: bool,
    /// Stores go through the supervisor's store buffers (TSO, PSO).
    pub buffered: bool,
    /// Let the program's stdout and stderr through (a replay under a debugger); otherwise
    /// they are captured.
    pub program_output: bool,
    /// Executions may be traced by a debugger and stop at their error (`--gdb`).
    pub debuggable: bool,
    /// The engine library the runtime loads into the worker, so that the worker can run a
    /// whole exploration itself ([`in_worker`]).
    pub engine: Option<PathBuf>,
    /// Stack and TLS memory shared between threads ([lo, hi) ranges found by an earlier
    /// exploration): its owner's accesses to it are visible events too.
    pub shared: Vec<(u64, u64)>,
    /// Every access of a thread to its own stack or TLS is a visible event (to find shared
    /// ones where a thread spun on memory the checker did not see).
    pub all_stacks: bool,
    /// The graph engine explores: every access reads what it chooses, every write is
    /// tentative (implies `buffered`).
    pub graph: bool,
}

pub struct NativeTarget {
    /// The program's file (for the debugger).
    exe: PathBuf,
    ch: Channel,
    server: Child,
    /// The capture of the program's stdout and stderr (not when they are let through).
    output: Option<File>,
    plan: Plan,
    timeout: Duration,

    in_exec: bool,
    /// The fs_cmd value that started the current execution; the runtime answers it in exec_done.
    cmd: u32,
    /// The program runs on the one CPU this thread runs on ([`pin_thread`]).
    shares_cpu: bool,
    /// The step running now hung in an earlier execution with the same prefix: it is set
    /// aside after [`HANG_AGAIN`] rather than the full time limit.
    hang_again: bool,
    /// A private channel holding the states read back from a script's log.
    scratch: Option<Channel>,
    /// Scripted replay: the steps the next execution begins with, and for the current one what
    /// the runtime ran of them ([`Replayed`]).
    script: Vec<ScriptStep>,
    replayed: Option<Replayed>,
    pub load_bias: u64,
    pub tramp: u64,
    /// Shared with the worker's engine, when it has one.
    area: Option<in_worker::Area>,
    /// The worker's engine explored (all of it, or this worker's part).
    explored_inside: bool,
}

/// Everything the startup can fail with is a message for the user.
pub type StartError = String;

/// The program's output is captured up to this many bytes per execution; further writes fail.
const OUTPUT_CAP: u64 = 1 << 20;
/// How much of the end of an execution's output a counterexample shows.
const OUTPUT_SHOWN: u64 = 4096;

/// `ranges` as few sorted, disjoint ranges as cover them all, at most `channel::MAX_SHARED`:
/// overlapping and adjacent ones are joined, then the closest ones while there are too many
/// (a range covering more makes more accesses visible, never fewer).
pub fn merge_shared(ranges: impl IntoIterator<Item = (u64, u64)>) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = ranges.into_iter().filter(|(lo, hi)| lo < hi).collect();
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (lo, hi) in v {
        match out.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    while out.len() > channel::MAX_SHARED {
        let i = (0..out.len() - 1)
            .min_by_key(|&i| out[i + 1].0 - out[i].1)
            .expect("more than one range");
        out[i].1 = out[i + 1].1;
        out.remove(i + 1);
    }
    out
}

/// Load the program, plan its instrumentation, and start it under the runtime.
pub fn launch(path: &Path, opts: &Options) -> Result<(Program, NativeTarget), StartError> {
    let program = Program::load(path).map_err(|e| e.0)?;
    let decoder = crate::targets::decoder(program.arch).ok_or("unsupported architecture")?;
    let plan = Plan::new(
        &program,
        decoder,
        !opts.shared.is_empty() || opts.all_stacks,
    );
    let target = NativeTarget::start(path, plan, opts)?;
    Ok((program, target))
}

impl NativeTarget {
    /// All the program wrote in the last execution (a replay's, shown after it).
    pub fn captured_output(&self) -> Vec<u8> {
        let all = self
            .captured_end(OUTPUT_CAP)
            .map(|(all, _)| all)
            .unwrap_or_default();
        self.program_text(all)
    }

    /// What the program (or its loader, or qemu) wrote before the runtime kept count of the
    /// output: the capture up to its first zero byte.
    fn early_output(&self) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let mut head = vec![0; 4096];
        self.output.as_ref()?.read_exact_at(&mut head, 0).ok()?;
        let n = head.iter().position(|&b| b == 0).unwrap_or(head.len());
        head.truncate(n);
        Some(head)
    }

    /// What the program wrote, without what qemu-user adds to its stderr when the guest dies
    /// of a signal (the report says how it died).
    fn program_text(&self, mut out: Vec<u8>) -> Vec<u8> {
        const QEMU_SAYS: &[u8] = b"qemu: uncaught target signal";
        if self.plan.arch == Arch::Ppc64le {
            let mut kept = Vec::with_capacity(out.len());
            for line in out.split_inclusive(|&b| b == b'\n') {
                if !line.starts_with(QEMU_SAYS) {
                    kept.extend_from_slice(line);
                }
            }
            out = kept;
        }
        out
    }

    /// The last `at_most` bytes of what the program wrote in the last execution, and how many
    /// it wrote (up to the capture's size); None when the output is not captured or unreadable.
    fn captured_end(&self, at_most: u64) -> Option<(Vec<u8>, u64)> {
        use std::os::unix::fs::FileExt;
        let file = self.output.as_ref()?;
        let total = self.ch.header().out_len.min(OUTPUT_CAP);
        let start = total.saturating_sub(at_most);
        let mut end = vec![0; (total - start) as usize];
        file.read_exact_at(&mut end, start).ok()?;
        Some((end, total))
    }

    /// Instrumented instructions.
    pub fn sites(&self) -> usize {
        self.plan.sites.len()
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    pub fn start(path: &Path, plan: Plan, opts: &Options) -> Result<NativeTarget, StartError> {
        become_subreaper();
        let exe = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut flags = 0;
        if opts.fences_visible {
            flags |= channel::FLAG_FENCES_VISIBLE;
        }
        if opts.buffered || opts.graph {
            flags |= channel::FLAG_BUFFERED;
        }
        if opts.buffered {
            flags |= channel::FLAG_STORE_BUFFERS;
        }
        if opts.graph {
            flags |= channel::FLAG_GRAPH | channel::FLAG_FENCES_VISIBLE;
        }
        if opts.debuggable {
            flags |= channel::FLAG_DEBUGGABLE;
        }
        if !opts.program_output {
            flags |= channel::FLAG_CAPTURED;
        }
        if opts.all_stacks {
            flags |= channel::FLAG_ALL_STACKS;
        }
        if !plan.wide_state {
            flags |= channel::FLAG_SSE_ONLY;
        }
        let ch = Channel::create(&plan.wire_sites(), plan.code_size(), flags, &opts.shared)
            .map_err(|e| format!("cannot create the shared channel: {e}"))?;
        let emulator = match plan.arch {
            Arch::X86_64 => None,
            Arch::Ppc64le => Some(Emulator::find()?),
        };
        let runtime =
            runtime_memfd(plan.arch).map_err(|e| format!("cannot stage the runtime: {e}"))?;
        // (the engine library is built for the checker's own instruction set)
        let engine = opts.engine.as_ref().filter(|_| emulator.is_none());
        let area = engine
            .map(|_| in_worker::Area::create())
            .transpose()
            .map_err(|e| format!("cannot create the engine's shared area: {e}"))?;
        // Named through our pid, not /proc/self: a debugger reading the program's link map
        // opens the same memfd (through /proc/self it would open one of its own fds).
        let preload = format!("/proc/{}/fd/{}", std::process::id(), runtime.as_raw_fd());
        let mut cmd = match &emulator {
            None => {
                let mut cmd = Command::new(&exe);
                cmd.env("LD_PRELOAD", &preload);
                cmd
            }
            Some(em) => {
                // the guest's environment is qemu's, but the preload is the guest's alone
                let mut cmd = Command::new(&em.qemu);
                cmd.arg("-L")
                    .arg(&em.root)
                    .arg("-E")
                    .arg(format!("LD_PRELOAD={preload}"))
                    .arg(&exe);
                cmd
            }
        };
        // Every process of a check gets environment strings of the same lengths (descriptors
        // in fixed width, the engine's variables also where it runs no engine, with no area):
        // they lie above the program's arguments on its stack, so that a copy of an argument
        // splits into the same pieces (events) in a worker and in the checker's replay of the
        // worker's error, which otherwise behaved differently.
        let fd_text = |fd: i32| format!("{fd:06}");
        cmd.args(&opts.args)
            .env("SMC_CHANNEL_FD", fd_text(ch.fd()))
            .env("SMC_RUNTIME_FD", fd_text(runtime.as_raw_fd()))
            .env("LD_BIND_NOW", "1")
            // A Rust panic's backtrace is symbolised from /proc/self/maps and the executable's
            // DWARF: thousands of events through uninstrumented reads, for nothing the checker
            // reports (the panic's message and place are enough)
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::null());
        let staged = emulator.is_none().then(engine_library).flatten();
        if let Some(lib) = engine.or(staged.as_ref()) {
            let area = area.as_ref().map_or(0, |a| a.fd());
            cmd.env("SMC_ENGINE_LIB", lib)
                .env("SMC_ENGINE_FD", fd_text(area));
        }
        let output = if opts.program_output {
            None
        } else {
            let capture_error = |e| format!("cannot capture the output: {e}");
            let f = output_memfd().map_err(capture_error)?;
            // two descriptors of one open file: stdout and stderr share its offset
            let fd = || f.try_clone().map(Stdio::from).map_err(capture_error);
            cmd.stdout(fd()?).stderr(fd()?);
            Some(f)
        };
        // The program inherits the channel and the runtime (the dynamic loader opens it through
        // /proc/self/fd): clear their CLOEXEC in the child only.
        let inherited = [
            ch.fd(),
            runtime.as_raw_fd(),
            area.as_ref().map_or(-1, |a| a.fd()),
        ];
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                for fd in inherited.into_iter().filter(|&fd| fd >= 0) {
                    libc::fcntl(fd, libc::F_SETFD, 0);
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // The same addresses in every run of the checker: a saved schedule names
                // PSO buffers by location, and replays show the same pointers.
                libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong);
                libc::setpgid(0, 0);
                Ok(())
            });
        }
        let server = cmd
            .spawn()
            .map_err(|e| format!("{}: cannot start: {e}", path.display()))?;
        let mut t = NativeTarget {
            exe,
            ch,
            server,
            output,
            plan,
            timeout: opts.exec_timeout,

            in_exec: false,
            cmd: 0,
            shares_cpu: thread_cpus().len() == 1,
            hang_again: false,
            script: Vec::new(),
            replayed: None,
            scratch: None,
            load_bias: 0,
            tramp: 0,
            area,
            explored_inside: false,
        };
        t.handshake()?;
        Ok(t)
    }

    fn wait_init(&mut self, want: u32) -> Result<(), StartError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seq = self.ch.sup_futex().load(SeqCst);
            match self.ch.init_state().load(SeqCst) {
                s if s == want => return Ok(()),
                init::FAILED => {
                    return Err(format!(
                        "the runtime could not start: {}",
                        self.ch.err_msg()
                    ))
                }
                _ => {}
            }
            if let Ok(Some(st)) = self.server.try_wait() {
                let h = self.ch.header();
                let at = if self.ch.err_kind().load(SeqCst) == err::SIGNAL {
                    format!(" at {:#x} (data address {:#x})", h.err_pc, h.err_addr)
                } else {
                    String::new()
                };
                // (what it or its loader said last: qemu's reason, for one)
                let said = self
                    .early_output()
                    .map(|text| String::from_utf8_lossy(&text).into_owned())
                    .and_then(|t| {
                        t.lines()
                            .rfind(|l| !l.trim().is_empty())
                            .map(str::to_string)
                    })
                    .map_or(String::new(), |l| format!(": {}", l.trim()));
                return Err(format!(
                    "the program ended before reaching main ({st}{at}){said}"
                ));
            }
            if interrupted() {
                return Err("interrupted".to_string());
            }
            if Instant::now() > deadline {
                return Err("the program did not reach main within 30 s".to_string());
            }
            self.sleep(seq, Duration::from_millis(20));
        }
    }

    fn handshake(&mut self) -> Result<(), StartError> {
        self.wait_init(init::MAPPED)?;
        self.load_bias = self.ch.header().load_bias;
        self.tramp = self.ch.header().tramp_addr;
        let tramp = self.tramp;
        self.plan
            .write_copies(self.load_bias, tramp, self.ch.code_area())?;
        self.ch.init_state().store(init::CODE, SeqCst);
        futex_wake(self.ch.init_state());
        self.wait_init(init::READY)
    }

    /// Start the next command: an execution, or (`explore`) a whole exploration by the
    /// worker's engine.
    fn begin_command(&mut self, explore: bool) {
        self.in_exec = true;
        // 0 in exec_done means no answer: the command numbers skip it when they wrap
        self.cmd = self.ch.fs_cmd().load(SeqCst).wrapping_add(1).max(1);
        let e = if explore { self.cmd } else { 0 };
        self.ch.explore_cmd().store(e, SeqCst);
        self.ch.fs_cmd().store(self.cmd, SeqCst);
        // the fork server or the worker waits for it, yielding or asleep (runtime's next_command)
        self.wake_sleeper(self.ch.fs_cmd());
    }

    /// Start an execution that begins with `steps` (logged, or carried out alone), and wait
    /// until every thread waits after them: the live state, and how many steps it was given.
    fn start_execution(
        &mut self,
        steps: &mut dyn Iterator<Item = &ScriptStep>,
        logged: bool,
    ) -> Result<(Snapshot, usize), ExecError> {
        if self.in_exec {
            self.end()?;
        }
        self.ch.reset_execution();
        self.replayed = None;
        let n = self.ch.set_script(steps, logged);
        self.begin_command(false);
        Ok((self.wait()?, n))
    }

    /// How this target ran its executions: "coroutines" (a worker process reset from a
    /// snapshot between executions, the program's threads as coroutines) or "fork" (a process
    /// per execution, real threads).
    pub fn executor(&self) -> &'static str {
        if self.ch.coroutines().load(SeqCst) == coroutines::ON {
            "coroutines"
        } else {
            "fork"
        }
    }

    /// Validated reads of the channel.
    fn reader(&self) -> ChannelReader<'_> {
        self.reader_of(&self.ch)
    }

    /// Validated reads of `ch`: the live channel, or the scratch one of a scripted replay.
    fn reader_of<'a>(&'a self, ch: &'a Channel) -> ChannelReader<'a> {
        ChannelReader {
            ch,
            plan: Some(&self.plan),
            load_bias: self.load_bias,
            tramp: self.tramp,
        }
    }

    /// Wait until every thread of the execution waits again, or its process has ended. A thread
    /// that runs longer than the time limit without reaching a visible operation is a hang:
    /// with coroutines the runtime sets it aside (the hang signal, again every
    /// [`in_worker::HANG_RESEND`] until it does, for 2 s), with real threads the execution
    /// ends.
    fn wait(&mut self) -> Result<Snapshot, ExecError> {
        let started = Instant::now();
        let limit = if std::mem::take(&mut self.hang_again) {
            HANG_AGAIN
        } else {
            self.timeout
        };
        let mut hang_sent: Option<(Instant, Instant)> = None; // first and last signal
        let mut spins = 0u32;
        loop {
            // (first: a long execution whose every step is quick never waits long enough to
            // see it later)
            if interrupted() {
                self.kill_execution()?;
                return Err(ExecError::Interrupted);
            }
            let seq = self.ch.sup_futex().load(SeqCst);
            if self.exec_ended() {
                self.in_exec = false;
                return self.reader().snapshot(true);
            }
            if self.ch.running().load(SeqCst) == 0 && !self.ch.scripting() {
                return self.reader().snapshot(false);
            }
            // Spin before sleeping: the program's thread usually stops again within
            // microseconds, and a futex wake-up of a sleeping supervisor costs tens of them.
            // On a CPU of our own with the program, yield to it instead (BENCHMARKS.md).
            if spins < if self.shares_cpu { YIELDS } else { SPINS } {
                spins += 1;
                if self.shares_cpu {
                    // SAFETY: plain syscall; lets the program's thread run on our CPU
                    unsafe { libc::sched_yield() };
                } else {
                    std::hint::spin_loop();
                }
                continue;
            }
            if started.elapsed() > limit {
                let now = Instant::now();
                let (first, last) = hang_sent.get_or_insert((now, now - in_worker::HANG_RESEND));
                if self.executor() != "coroutines" || now - *first > Duration::from_secs(2) {
                    let slot = self.reader().running_slot()?;
                    self.kill_execution()?;
                    return Err(ExecError::Timeout { slot });
                }
                if now - *last >= in_worker::HANG_RESEND {
                    *last = now;
                    self.signal_execution(in_worker::hang_signal(self.plan.arch));
                }
                self.sleep(seq, Duration::from_millis(5));
                continue;
            }
            if let Ok(Some(st)) = self.server.try_wait() {
                return Err(server_died(st));
            }
            self.sleep(seq, Duration::from_millis(20));
        }
    }

    /// SIGKILL the execution's process (a child of our fork server, by its PID) and wait
    /// until the fork server has reaped it.
    fn kill_execution(&mut self) -> Result<(), ExecError> {
        if !self.in_exec {
            return Ok(());
        }
        self.signal_execution(libc::SIGKILL);
        self.wait_done(Duration::from_secs(10))
    }

    /// Send `sig` to the execution's process (a child of our fork server, by its PID; with
    /// coroutines the worker).
    fn signal_execution(&self, sig: i32) {
        let pid = self.ch.child_pid();
        if pid > 1 && pid as u32 != self.server.id() {
            // SAFETY: plain syscall on a PID the fork server has not reaped yet (exec_done does
            // not answer the command), so it cannot have been reused.
            unsafe { libc::kill(pid, sig) };
        }
    }

    fn wait_done(&mut self, limit: Duration) -> Result<(), ExecError> {
        let deadline = Instant::now() + limit;
        while !self.exec_ended() {
            if Instant::now() > deadline {
                return Err(ExecError::Fatal(
                    "an execution could not be stopped".to_string(),
                ));
            }
            if let Ok(Some(st)) = self.server.try_wait() {
                return Err(server_died(st));
            }
            let seq = self.ch.sup_futex().load(SeqCst);
            if self.exec_ended() {
                break;
            }
            self.sleep(seq, Duration::from_millis(10));
        }
        self.in_exec = false;
        Ok(())
    }

    /// Give a waiting thread its reply (it is not released yet); its slot index.
    fn set_reply(&self, slot: u32, reply: &Reply) -> Result<usize, ExecError> {
        give_reply(&self.ch, slot, reply)
    }

    fn resume(&self, slot: usize) {
        self.ch.running().store(1, SeqCst);
        self.ch.slot_go(slot).store(1, SeqCst);
        self.wake(slot);
    }

    /// Sleep until the runtime bumps sup_futex past `seq` (read before the caller looked at
    /// the channel), or `limit`. The runtime makes the wake-up call only while we sleep.
    fn sleep(&self, seq: u32, limit: Duration) {
        self.ch.sup_sleeping().store(1, SeqCst);
        futex_wait(self.ch.sup_futex(), seq, limit);
        self.ch.sup_sleeping().store(0, SeqCst);
    }

    /// Wake the thread of `slot`, whose go is set: its own futex, or with coroutines the one
    /// OS thread that runs them all (if it sleeps; a bump is enough while it yields).
    fn wake(&self, slot: usize) {
        if self.ch.coroutines().load(SeqCst) == coroutines::ON {
            self.ch.rt_wake().fetch_add(1, SeqCst);
            self.wake_sleeper(self.ch.rt_wake());
        } else {
            futex_wake(self.ch.slot_go(slot));
        }
    }

    /// The futex wake-up call on `word`, whose change the runtime waits for, made only while
    /// it sleeps (rt_sleeping, set by the runtime's rt_wait on any word); a yielding runtime
    /// sees the change by itself.
    fn wake_sleeper(&self, word: &AtomicU32) {
        if self.ch.rt_sleeping().load(SeqCst) != 0 {
            futex_wake(word);
        }
    }

    /// The runtime has answered the current execution's command: its process ended or, with
    /// coroutines, the worker finished it.
    fn exec_ended(&self) -> bool {
        self.ch.exec_done().load(SeqCst) == self.cmd
    }
}

/// Give the thread of `slot` in `ch`, which must be waiting, its reply (it is not released
/// yet); its slot index.
fn give_reply(ch: &Channel, slot: u32, reply: &Reply) -> Result<usize, ExecError> {
    let reader = ChannelReader {
        ch,
        plan: None,
        load_bias: 0,
        tramp: 0,
    };
    let i = slot as usize;
    if i >= reader.nthreads()? || ch.slot_state(i).load(SeqCst) != slot_state::STOPPED {
        return Err(ExecError::Fatal(format!(
            "internal: slot {slot} is not waiting"
        )));
    }
    ch.set_reply(i, reply.value, reply.patch.as_ref());
    Ok(i)
}

/// Write into the memory of the execution's process (a descendant of ours, stopped at a visible
/// operation: no thread of it runs).
fn write_memory(pid: i32, addr: u64, bytes: &[u8]) -> Result<(), ExecError> {
    let local = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: plain syscall; the local buffer outlives it.
    let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
    if n != bytes.len() as isize {
        return Err(ExecError::Fatal(format!(
            "cannot write a buffered store to {addr:#x} in the program: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// The TracerPid of a process (0 when not traced), if it is still there.
fn tracer_of(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The fork server ended under an execution: only a kill from outside (often the program
/// signalling its parent) ends it there.
fn server_died(st: std::process::ExitStatus) -> ExecError {
    ExecError::Fatal(format!(
        "the checker's fork server died during an execution ({st}); does the program signal its \
         parent process?"
    ))
}

impl Executor for NativeTarget {
    fn dependencies(&self, pc: u64) -> Option<crate::decode::SiteDependencies> {
        let bias = self.load_bias;
        // (an access the analysis did not see may depend on anything before it)
        let Some(d) = self.plan.dependencies.get(&pc.wrapping_sub(bias)) else {
            return Some(Default::default());
        };
        let moved = |v: &[u64]| v.iter().map(|a| a.wrapping_add(bias)).collect();
        Some(crate::decode::SiteDependencies {
            addr: moved(&d.addr),
            data: moved(&d.data),
            ctrl: moved(&d.ctrl),
            ctrlisync: moved(&d.ctrlisync),
            may: moved(&d.may),
            may_earlier: moved(&d.may_earlier),
            precise_in: d.precise_in.map(|a| a.wrapping_add(bias)),
        })
    }

    fn begin(&mut self) -> Result<Snapshot, ExecError> {
        let script = std::mem::take(&mut self.script);
        let (live, _) = self.start_execution(&mut script.iter(), true)?;
        self.script = script;
        self.serve_script(live)
    }

    fn script(&mut self, steps: Vec<ScriptStep>) {
        self.script = steps;
    }

    fn takes_script(&self) -> bool {
        true
    }

    fn max_prefix(&self) -> usize {
        // Real threads (fork per execution) stop with the runtime's script code on their
        // stacks or not, which their await hashes would see: every step through the engine.
        if self.executor() == "coroutines" {
            channel::MAX_SCRIPT
        } else {
            0
        }
    }

    fn begin_after(
        &mut self,
        steps: &mut dyn Iterator<Item = &ScriptStep>,
    ) -> Result<(Snapshot, usize), ExecError> {
        self.script.clear();
        let (live, n) = self.start_execution(steps, false)?;
        Ok((live, self.ch.script_progress(n).0))
    }

    fn step_hanging(&mut self, slot: u32, reply: &Reply) -> Result<Snapshot, ExecError> {
        self.hang_again = true;
        let r = self.step(slot, reply);
        self.hang_again = false;
        r
    }

    fn step(&mut self, slot: u32, reply: &Reply) -> Result<Snapshot, ExecError> {
        match self.start_step(slot, reply)? {
            Some(snap) => Ok(snap),
            None => self.wait(),
        }
    }

    fn start_step(&mut self, slot: u32, reply: &Reply) -> Result<Option<Snapshot>, ExecError> {
        let is_next = |s: &ScriptStep| matches!(s, ScriptStep::Run { slot: n, reply: r, .. } if *n == slot && r == reply);
        if let Some(r) = self.replayed_step(is_next) {
            return r.map(Some);
        }
        let i = self.set_reply(slot, reply)?;
        self.resume(i);
        Ok(None)
    }

    fn finish_step(&mut self) -> Result<Snapshot, ExecError> {
        self.wait()
    }

    fn commit(&mut self, owner: u32, addr: u64, bytes: &[u8]) -> Result<(), ExecError> {
        let is_next = |s: &ScriptStep| matches!(s, ScriptStep::Commit { owner: o, addr: a, bytes: b } if *o == owner && *a == addr && b[..] == *bytes);
        if let Some(r) = self.replayed_step(is_next) {
            return r.map(|_| ());
        }
        if self.ch.push_commit(owner, addr, bytes) {
            return Ok(());
        }
        // The queue is full (a long run of updates with no thread running): write the queued
        // stores into the execution's process ourselves, in order, and start a new queue.
        let pid = self.ch.child_pid();
        for (o, a, b) in
            self.ch
                .take_commits()
                .into_iter()
                .chain(std::iter::once((owner, addr, bytes.to_vec())))
        {
            write_memory(pid, a, &b)?;
            self.ch.retire_pending(o, a);
        }
        Ok(())
    }

    fn observed(&self) -> Observation {
        self.ch.observed()
    }

    fn found_shared(&self) -> Vec<(u64, u64)> {
        self.ch.found_shared()
    }

    fn output(&self) -> Option<Output> {
        let (tail, total) = self.captured_end(OUTPUT_SHOWN)?;
        Some(Output {
            tail: self.program_text(tail),
            total,
            cut: total == OUTPUT_CAP,
        })
    }

    fn code_address(&self, pc: u64) -> u64 {
        self.reader().original_pc(pc)
    }

    fn heap_blocks(&self) -> Vec<(u64, u64, u64)> {
        self.ch
            .heap_blocks()
            .into_iter()
            .map(|(a, s, pc)| (a, s, self.code_address(pc)))
            .collect()
    }

    fn hand_over(&mut self, slot: u32, reply: &Reply) -> Result<(), ExecError> {
        let i = self.set_reply(slot, reply)?;
        let pid = self.ch.child_pid();
        // Our int3 traps are the runtime's business, not breakpoints of gdb's.
        let args = [
            "-q".to_string(),
            self.exe.display().to_string(),
            "-p".to_string(),
            pid.to_string(),
            "-iex".to_string(),
            "set confirm off".to_string(),
            "-ex".to_string(),
            "handle SIGTRAP nostop noprint pass".to_string(),
            "-ex".to_string(),
            "continue".to_string(),
        ];
        let shown: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains(' ') {
                    format!("'{a}'")
                } else {
                    a.clone()
                }
            })
            .collect();
        eprintln!(
            "smc-run: the program (pid {pid}) is stopped just before its failing event; it goes on \
             once a debugger is attached, and stops (SIGSTOP) when the error happens:\n  gdb {}",
            shown.join(" ")
        );
        let gdb_cmd = std::env::var("SMC_RUN_GDB").unwrap_or_else(|_| "gdb".into());
        let mut gdb = match Command::new(&gdb_cmd).args(&args).spawn() {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("smc-run: cannot start `{gdb_cmd}` ({e}); attach a debugger yourself");
                None
            }
        };
        // Release the failing thread only once the debugger is attached.
        loop {
            if tracer_of(pid).is_some_and(|t| t != 0) {
                break;
            }
            if let Some(Ok(Some(_))) = gdb.as_mut().map(|g| g.try_wait()) {
                return Err(ExecError::Fatal(
                    "the debugger ended before attaching".into(),
                ));
            }
            if interrupted() {
                return Err(ExecError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.resume(i);
        match gdb.as_mut() {
            Some(g) => {
                let _ = g.wait();
            }
            None => {
                while !self.exec_ended() && !interrupted() {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        Ok(())
    }

    fn may_explore_inside(&self) -> bool {
        self.area.is_some()
    }

    fn explore_inside(
        &mut self,
        model: &dyn crate::model::Model,
        cfg: &engine::Config,
        portion: engine::Portion,
        progress: engine::Progress,
    ) -> Result<Option<Outcome>, ExecError> {
        in_worker::explore(self, model, cfg, portion, progress)
    }

    fn end(&mut self) -> Result<(), ExecError> {
        if !self.in_exec {
            return Ok(());
        }
        // Ask the waiting threads to leave; one of them ends the process.
        self.ch.abort().store(1, SeqCst);
        for i in 0..self.reader().nthreads().unwrap_or(0) {
            if self.ch.slot_state(i).load(SeqCst) == slot_state::STOPPED {
                self.ch.slot_go(i).store(1, SeqCst);
                self.wake(i);
            }
        }
        if self.wait_done(Duration::from_secs(2)).is_err() {
            self.in_exec = true;
            self.kill_execution()?;
        }
        Ok(())
    }
}

impl Drop for NativeTarget {
    fn drop(&mut self) {
        let _ = self.kill_execution();
        self.ch.fs_quit().store(1, SeqCst);
        futex_wake(self.ch.fs_cmd());
        let pgid = self.server.id() as i32;
        // The fork server leaves once its worker has left and it has reaped it.
        wait_exited_unreaped(pgid, Duration::from_secs(1));
        // SAFETY: the fork server leads its own process group (setpgid in pre_exec); every
        // process in it was started by us. It is not reaped yet, so the group's number is
        // still ours.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        wait_exited_unreaped(pgid, Duration::from_secs(1));
        // A worker the fork server left behind (it died, or was killed, before reaping it) is
        // our child now: gone before we return, not still tearing down.
        reap_orphans(pgid, Duration::from_secs(2));
        let _ = self.server.wait();
    }
}
