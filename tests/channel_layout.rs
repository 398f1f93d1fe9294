//! The wire layout is defined twice, in runtime/channel.h and src/channel/mod.rs; this test
//! compiles a C program that prints the header's offsets and compares them with Rust's.

mod common;

use std::mem::{offset_of, size_of};
use std::process::Command;

use smc_run::channel::{
    coroutines, store_conditional, Block, Commit, Header, LogEntry, PendingStore, ScriptStep, Slot,
    LOCK_WAIT_HASH, MAGIC, MAX_ACCESS, MAX_BLOCKS, MAX_COMMITS, MAX_LOG, MAX_OBSERVED, MAX_PENDING,
    MAX_SCRIPT, MAX_THREADS, MSG_LEN, SCRIPT_COMMIT, VERSION,
};
use smc_run::site::{site_kind, Site, MODELLED_RUST_MUTEX_LOCK};

macro_rules! fields {
    ($ty:ty, $cty:literal: $($f:ident),*) => {
        vec![
            (format!("sizeof {}", $cty), size_of::<$ty>()),
            $((format!("{}.{}", $cty, stringify!($f)), offset_of!($ty, $f)),)*
        ]
    };
}

#[test]
fn rust_mirror_matches_the_c_header() {
    let mut rust = fields!(Site, "smc_site": offset, disp, copy_off, size, kind, len, base, index, scale, addr32, orig, dead_regs, string_op, rep, spin_reg, spin_value, await_mask);
    rust.extend(
        fields!(Slot, "smc_slot": go, state, parent, op, addr, addr2, size, arg, arg2, pc, hash, reply,
        prev_read, prev_written, prev_flags, site, patch_mask, stored_size, skipped, pending_head, pending_tail, patch, stored, replaced),
    );
    rust.extend(fields!(Commit, "smc_commit": addr, size, owner, bytes));
    rust.extend(fields!(Block, "smc_block": addr, size, pc));
    rust.extend(fields!(ScriptStep, "smc_script_step": slot, size, reply, patch_mask, addr, expect_pc, expect_addr, owner, bytes));
    rust.extend(fields!(PendingStore, "smc_pending": addr, size, prev, next, bytes, saved));
    rust.extend(fields!(LogEntry, "smc_log_entry": epoch, slot, copy));
    rust.extend(fields!(Header, "smc_header": magic, version, max_threads, total_size, nsites, flags, sites_off,
        code_off, code_cap, init_state, explore_cmd, load_bias, tramp_addr, self_addr, fs_cmd, fs_quit, child_pid, wait_status, exec_done,
        abort, coroutines, rt_wake, worker_cmd, worker_last, sup_sleeping, rt_sleeping, sup_futex, running, nthreads, ncommits, err_kind, err_signal, err_slot, hang_soon_us, err_pc, err_addr, err_msg, observed_mask, observed, nblocks, blocks, slots,
        commits, out_len, script_len, script_done, log_len, log_threads, script_logged, script, log, pending_top, pending_free, pending));
    rust.push(("SMC_CHANNEL_MAGIC".into(), MAGIC as usize));
    rust.push(("SMC_CHANNEL_VERSION".into(), VERSION as usize));
    rust.push(("SMC_MAX_THREADS".into(), MAX_THREADS));
    rust.push(("SMC_MSG_LEN".into(), MSG_LEN));
    rust.push(("SMC_MAX_ACCESS".into(), MAX_ACCESS));
    rust.push(("SMC_MAX_COMMITS".into(), MAX_COMMITS));
    rust.push(("SMC_MAX_OBSERVED".into(), MAX_OBSERVED));
    rust.push(("SMC_MAX_BLOCKS".into(), MAX_BLOCKS));
    rust.push(("SMC_MAX_SCRIPT".into(), MAX_SCRIPT));
    rust.push(("SMC_MAX_LOG".into(), MAX_LOG));
    rust.push(("SMC_MAX_PENDING".into(), MAX_PENDING));
    rust.push(("SMC_SCRIPT_COMMIT".into(), SCRIPT_COMMIT as usize));
    rust.push(("SMC_HASH_LOCK_WAIT".into(), LOCK_WAIT_HASH as usize));
    rust.push(("SMC_SITE_MODELLED".into(), site_kind::MODELLED as usize));
    rust.push((
        "SMC_MODELLED_RUST_MUTEX_LOCK".into(),
        MODELLED_RUST_MUTEX_LOCK as usize,
    ));
    rust.push(("SMC_COROUTINES_OFF".into(), coroutines::OFF as usize));
    rust.push(("SMC_COROUTINES_ON".into(), coroutines::ON as usize));
    rust.push(("SMC_COROUTINES_FAILED".into(), coroutines::FAILED as usize));
    rust.push((
        "SMC_SC_BY_VALUE".into(),
        store_conditional::BY_VALUE as usize,
    ));
    rust.push(("SMC_SC_FAIL".into(), store_conditional::FAIL as usize));
    rust.push(("SMC_SC_WRITE".into(), store_conditional::WRITE as usize));

    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"channel.h\"\nint main(void) {\n",
    );
    for (name, _) in &rust {
        let expr = match name.split_once(' ') {
            Some(("sizeof", ty)) => format!("sizeof(struct {ty})"),
            _ => match name.split_once('.') {
                Some((ty, field)) => format!("offsetof(struct {ty}, {field})"),
                None => name.clone(),
            },
        };
        c.push_str(&format!(
            "    printf(\"%s %zu\\n\", \"{name}\", (size_t)({expr}));\n"
        ));
    }
    c.push_str("    return 0;\n}\n");
    let scratch = common::Scratch::new("layout");
    let src = scratch.0.join("layout.c");
    std::fs::write(&src, c).unwrap();
    let exe = scratch.0.join("layout");
    let runtime = concat!(env!("CARGO_MANIFEST_DIR"), "/runtime");
    let st = Command::new("cc")
        .arg(format!("-I{runtime}"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(st.success());
    let out = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    let from_c: Vec<(String, usize)> = out
        .lines()
        .map(|l| {
            let (n, v) = l.rsplit_once(' ').unwrap();
            (n.to_string(), v.parse().unwrap())
        })
        .collect();
    assert_eq!(from_c, rust);
}
