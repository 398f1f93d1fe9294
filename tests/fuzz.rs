//! Fuzzing of the three readers of untrusted bytes: the ELF loader (`Program::parse`), the
//! x86-64 decoder front-end (`Decoder::decode` and `relocate`) and the channel reader
//! (`ChannelReader`, what the supervisor reads of what the program's process wrote).
//!
//! For each target the checked-in corpus `tests/fuzz/<target>/` runs first, as a regression
//! test, then `PROPTEST_CASES` (default 256) inputs mutated from the corpus and from a program
//! compiled now. Every input must give an answer (Ok or an error), never a panic. An input that
//! panics is saved under `target/tmp/fuzz-failures/`: copy it into the corpus with the fix.
//!
//! A longer run: `PROPTEST_CASES=100000 cargo test --release --test fuzz`.

mod common;

use std::mem::offset_of;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::SeqCst;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};

use smc_run::channel::{op, slot_state, Channel, Header, Slot};
use smc_run::decode::Decoder;
use smc_run::instrument::Plan;
use smc_run::program::{CodeSection, Program};
use smc_run::supervisor::ChannelReader;
use smc_run::targets::x86_64::X86_64;

use common::{compile, source, Scratch};

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "empty corpus {}", dir.display());
    files
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// Run `target` on `input`; on a panic, keep the input for the corpus and fail with its name.
fn guarded(name: &str, input: &[u8], target: &dyn Fn(&[u8])) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(|| target(input))) {
        Ok(()) => Ok(()),
        Err(_) => {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join(format!("{name}-{:016x}", fnv(input)));
            std::fs::write(&file, input).unwrap();
            Err(format!(
                "{name}: panicked; input saved as {}",
                file.display()
            ))
        }
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// The corpus as a regression test, then mutations of `seeds` (the corpus and `extra`).
fn fuzz(name: &str, extra: Vec<Vec<u8>>, target: &dyn Fn(&[u8])) {
    let corpus = corpus(name);
    let failures: Vec<String> = corpus
        .iter()
        .filter_map(|(file, input)| {
            guarded(name, input, target)
                .err()
                .map(|e| format!("{file}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // the inputs built now (whole programs) as often as the small corpus files
    let n = corpus.len();
    let seeds: Vec<Vec<u8>> = corpus
        .into_iter()
        .map(|(_, b)| b)
        .chain(extra.iter().cycle().take(n * extra.len()).cloned())
        .collect();
    // overwrite 1, 2, 4 or 8 bytes with a boundary value or a random one
    let value = prop_oneof![
        Just(0u64),
        Just(u64::MAX),
        Just(0x8000_0000u64),
        0..256u64,
        any::<u64>()
    ];
    let mutation = (
        any::<Index>(),
        prop::collection::vec((any::<Index>(), value, 0..4u32), 0..24),
        prop::option::weighted(0.2, any::<Index>()),
    );
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&mutation, |(seed, edits, cut)| {
        let mut input = seeds[seed.index(seeds.len())].clone();
        if !input.is_empty() {
            for (at, value, width) in &edits {
                let i = at.index(input.len());
                let n = (1usize << width).min(input.len() - i);
                input[i..i + n].copy_from_slice(&value.to_le_bytes()[..n]);
            }
        }
        if let Some(cut) = cut {
            input.truncate(cut.index(input.len() + 1));
        }
        guarded(name, &input, target).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn sample_program(test: &str) -> (Scratch, PathBuf) {
    let scratch = Scratch::new(&format!("fuzz-{test}"));
    let bin = compile(&scratch, &source("sb.c"), "gcc", &["-O1"]);
    (scratch, bin)
}

#[test]
fn elf_loader() {
    let (_scratch, bin) = sample_program("elf");
    let sample = std::fs::read(&bin).unwrap();
    fuzz("elf", vec![sample], &|data| {
        if let Ok(p) = Program::parse(Path::new("fuzzed"), data) {
            // what the checker does next with a program it accepted
            let plan = Plan::new(&p, &X86_64, true);
            let _ = plan.wire_sites();
            for s in &p.code {
                let _ = p.function_at(s.addr);
            }
        }
    });
}

#[test]
fn x86_decoder() {
    let (_scratch, bin) = sample_program("x86");
    let program = Program::parse(&bin, &std::fs::read(&bin).unwrap()).unwrap();
    let text: Vec<Vec<u8>> = program.code.iter().map(|s| s.bytes.clone()).collect();
    fuzz("x86", text, &|code| {
        let section = CodeSection {
            name: ".text".into(),
            addr: 0x1000,
            bytes: code.to_vec(),
            landing_pads: vec![],
            functions: vec![(0x1000, 0x1000 + code.len() as u64)],
            symbols: vec![(0x1000, 0x1000 + code.len() as u64)],
            one_word_returns: vec![],
        };
        for (i, site) in X86_64.decode(&section, true).sites.iter().enumerate() {
            let at = 0x7fff_0000_0000 + (i * X86_64.copy_stride()) as u64;
            if let Ok(copy) = X86_64.relocate(site, 0x5555_5555_4000, at, None) {
                assert!(copy.len() <= X86_64.copy_stride(), "{site:?}");
            }
        }
    });
}

/// A channel input is a list of writes over a plausible state: `offset: u32 LE, len: u8,
/// bytes` records (a truncated record ends the list).
fn writes(input: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut rest = input;
    while rest.len() >= 5 {
        let off = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
        let len = (rest[4] as usize).min(rest.len() - 5);
        out.push((off, &rest[5..5 + len]));
        rest = &rest[5 + len..];
    }
    out
}

fn slot_field(i: usize, field: usize) -> usize {
    offset_of!(Header, slots) + i * std::mem::size_of::<Slot>() + field
}

#[test]
fn channel_reader() {
    let (_scratch, bin) = sample_program("channel");
    let program = Program::parse(&bin, &std::fs::read(&bin).unwrap()).unwrap();
    let plan = Plan::new(&program, &X86_64, true);
    fuzz("channel", Vec::new(), &|input| {
        let mut ch = Channel::create(&plan.wire_sites(), plan.code_size(), 0, &[]).unwrap();
        // two threads: the first stopped at a 4-byte load, the second exited
        ch.nthreads().store(2, SeqCst);
        ch.slot_state(0).store(slot_state::STOPPED, SeqCst);
        ch.slot_state(1).store(slot_state::EXITED, SeqCst);
        {
            let raw = ch.raw_mut();
            raw[slot_field(0, offset_of!(Slot, op))..][..4]
                .copy_from_slice(&op::LOAD.to_ne_bytes());
            raw[slot_field(0, offset_of!(Slot, size))..][..8].copy_from_slice(&4u64.to_ne_bytes());
            raw[slot_field(1, offset_of!(Slot, parent))..][..4]
                .copy_from_slice(&0u32.to_ne_bytes());
            let len = raw.len();
            for (off, bytes) in writes(input) {
                let off = off % len;
                let n = bytes.len().min(len - off);
                raw[off..off + n].copy_from_slice(&bytes[..n]);
            }
        }
        let reader = ChannelReader {
            ch: &ch,
            plan: Some(&plan),
            load_bias: 0x5555_5555_4000,
            tramp: 0x7fff_f7ff_0000,
        };
        let _ = reader.snapshot(false);
        let _ = reader.snapshot(true);
        let _ = ch.observed();
        let _ = ch.heap_blocks();
        let _ = ch.take_commits();
        let _ = ch.err_msg();
        for i in 0..4 {
            let _ = ch.pending(i);
            let _ = ch.stored(i);
        }
    });
}
