//! The spin-loop analyses on machine code written with iced's assembler.

use super::*;
use iced_x86::{code_asm::*, Decoder, DecoderOptions};

type Build<'a> = Box<dyn FnOnce(&mut CodeAssembler) -> Result<(), IcedError> + 'a>;

/// `analysis` at every instruction of the code `build` writes.
fn at_each<T>(
    build: Build,
    analysis: impl Fn(&[Instruction], usize, &mut InstructionInfoFactory) -> T,
) -> Vec<T> {
    let mut a = CodeAssembler::new(64).unwrap();
    build(&mut a).unwrap();
    let bytes = a.assemble(0x1000).unwrap();
    let all: Vec<Instruction> = Decoder::with_ip(64, &bytes, 0x1000, DecoderOptions::NONE)
        .into_iter()
        .collect();
    let mut info = InstructionInfoFactory::new();
    (0..all.len())
        .map(|k| analysis(&all, k, &mut info))
        .collect()
}

fn analyse(
    build: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>,
) -> Vec<Option<(u8, u8)>> {
    analyse_returning(build, RETURNS_TWO_WORDS)
}

/// [`analyse`] in a function whose return hands its caller `returned`.
fn analyse_returning(
    build: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>,
    returned: Regs,
) -> Vec<Option<(u8, u8)>> {
    at_each(Box::new(build), |all, k, info| {
        bounded_spin(all, k, info, returned)
    })
}

/// std's spin as rustc 1.95 builds it: a load into eax (instruction 2), `exits` (branches
/// to the label given on the loaded value), and a counter in ecx counting up from -100 to 0;
/// `after` where the loop ends.
fn counted_spin(
    a: &mut CodeAssembler,
    exits: impl FnOnce(&mut CodeAssembler, CodeLabel) -> Result<(), IcedError>,
    after: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>,
) -> Result<(), IcedError> {
    let mut l = a.create_label();
    let mut t = a.create_label();
    a.mov(ecx, -99i32)?;
    a.set_label(&mut l)?;
    a.pause()?;
    a.mov(eax, dword_ptr(rbx))?;
    exits(a, t)?;
    a.test(ecx, ecx)?;
    a.lea(ecx, ptr(rcx + 1))?;
    a.jne(l)?;
    a.set_label(&mut t)?;
    after(a)
}

/// std's `Mutex::spin`: the loop ends when the value is no longer 1.
fn std_spin(
    a: &mut CodeAssembler,
    after: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>,
) -> Result<(), IcedError> {
    counted_spin(
        a,
        |a, t| {
            a.cmp(eax, 1)?;
            a.jne(t)
        },
        after,
    )
}

#[test]
fn std_mutex_spin_is_bounded() {
    let found = analyse(|a| {
        std_spin(a, |a| {
            a.test(eax, eax)?;
            a.mov(ecx, 1)?;
            a.ret()
        })
    });
    assert_eq!(found[2], Some((2, spin_value::ZERO)), "{found:?}"); // ecx
    assert_eq!(found.iter().flatten().count(), 1);
}

/// std's `Mutex::lock_contended` spinning again after a wait: its exit branches back to the
/// wait, and the counter's next value is in edx when the function returns.
fn std_spin_after_wait(a: &mut CodeAssembler) -> Result<(), IcedError> {
    let (mut wait, mut l, mut done) = (a.create_label(), a.create_label(), a.create_label());
    a.set_label(&mut wait)?;
    a.cmp(eax, 2)?;
    a.je(done)?;
    a.mov(eax, 2)?;
    a.xchg(dword_ptr(rbx), eax)?;
    a.test(eax, eax)?;
    a.je(done)?;
    a.mov(ecx, -99i32)?;
    a.set_label(&mut l)?;
    a.pause()?;
    a.mov(eax, dword_ptr(rbx))?; // the load: instruction 8
    a.lea(edx, ptr(rcx + 1))?;
    a.cmp(eax, 1)?;
    a.jne(wait)?;
    a.test(ecx, ecx)?;
    a.mov(ecx, edx)?;
    a.jne(l)?;
    a.jmp(wait)?;
    a.set_label(&mut done)?;
    a.ret()
}

#[test]
fn an_exit_may_branch_back_and_a_one_word_return_leaves_rdx_dead() {
    // rdx reaches the return: dead only if the caller reads rax alone
    let found = analyse(std_spin_after_wait);
    assert!(found.iter().all(Option::is_none), "{found:?}");
    let found = analyse_returning(std_spin_after_wait, RETURNS_ONE_WORD);
    assert_eq!(found[8], Some((2, spin_value::ZERO)), "{found:?}"); // ecx
    assert_eq!(found.iter().flatten().count(), 1);
}

#[test]
fn a_counter_used_after_the_loop_is_not_dead() {
    // the counter is returned: how long the thread spun matters
    let found = analyse(|a| {
        std_spin(a, |a| {
            a.mov(eax, ecx)?;
            a.ret()
        })
    });
    assert!(found.iter().all(Option::is_none), "{found:?}");
    // a call may read it (rcx is the fourth argument)
    let found = analyse(|a| {
        std_spin(a, |a| {
            a.call(0x2000)?;
            a.ret()
        })
    });
    assert!(found.iter().all(Option::is_none), "{found:?}");
    // the flags of the exit test are read after the loop
    let found = analyse(|a| {
        std_spin(a, |a| {
            a.mov(ecx, 0)?;
            a.sete(al)?;
            a.ret()
        })
    });
    assert!(found.iter().all(Option::is_none), "{found:?}");
}

#[test]
fn exits_that_differ_or_a_store_in_the_loop_are_not_bounded_spins() {
    // running out goes elsewhere than a changed value
    let found = analyse(|a| {
        let mut l = a.create_label();
        let mut t = a.create_label();
        a.mov(ecx, 100)?;
        a.set_label(&mut l)?;
        a.mov(eax, dword_ptr(rbx))?;
        a.cmp(eax, 1)?;
        a.jne(t)?;
        a.dec(ecx)?;
        a.jne(l)?;
        a.mov(eax, 7)?;
        a.set_label(&mut t)?;
        a.xor(ecx, ecx)?;
        a.ret()
    });
    assert!(found.iter().all(Option::is_none), "{found:?}");
    // a store in the loop
    let found = analyse(|a| {
        let mut l = a.create_label();
        let mut t = a.create_label();
        a.mov(ecx, 100)?;
        a.set_label(&mut l)?;
        a.mov(eax, dword_ptr(rbx))?;
        a.mov(dword_ptr(rdx), ecx)?;
        a.cmp(eax, 1)?;
        a.jne(t)?;
        a.dec(ecx)?;
        a.jne(l)?;
        a.set_label(&mut t)?;
        a.xor(ecx, ecx)?;
        a.ret()
    });
    assert!(found.iter().all(Option::is_none), "{found:?}");
}

#[test]
fn a_counter_whose_low_byte_is_written_first_is_dead() {
    // std's RwLock::write_contended: `sets dl; or dl, cl` after a `setne cl`
    let found = analyse(|a| {
        std_spin(a, |a| {
            a.test(eax, eax)?;
            a.setne(cl)?;
            a.sets(dl)?;
            a.or(dl, cl)?;
            a.mov(ecx, 0)?;
            a.ret()
        })
    });
    assert_eq!(found[2], Some((2, spin_value::ZERO)), "{found:?}");
    // the whole register read after only its low byte was written
    let found = analyse(|a| {
        std_spin(a, |a| {
            a.test(eax, eax)?;
            a.setne(cl)?;
            a.mov(eax, ecx)?;
            a.ret()
        })
    });
    assert!(found.iter().all(Option::is_none), "{found:?}");
}

/// std's RwLock::write_contended: a second exit on a value computed after the first.
fn late_value(
    a: &mut CodeAssembler,
    after: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>,
) -> Result<(), IcedError> {
    counted_spin(
        a,
        |a, t| {
            a.test(eax, eax)?;
            a.js(t)?;
            a.mov(edx, eax)?;
            a.and(edx, 0x3fff_ffff)?;
            a.je(t)
        },
        after,
    )
}

#[test]
fn a_value_computed_after_an_exit_must_be_dead() {
    let found = analyse(|a| {
        late_value(a, |a| {
            a.mov(edx, 0x89)?;
            a.xor(ecx, ecx)?;
            a.test(eax, eax)?;
            a.ret()
        })
    });
    assert_eq!(found[2], Some((2, spin_value::ZERO)), "{found:?}");
    // at the first exit edx holds the iteration before's value: read after, not one load
    let found = analyse(|a| {
        late_value(a, |a| {
            a.mov(eax, edx)?;
            a.xor(ecx, ecx)?;
            a.test(eax, eax)?;
            a.ret()
        })
    });
    assert!(found.iter().all(Option::is_none), "{found:?}");
}

fn masks(build: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Vec<Regs> {
    at_each(Box::new(build), |all, k, info| {
        await_mask(all, k, info, RETURNS_TWO_WORDS)
    })
}

/// std's mpmc `Slot::wait_write`: wait for a bit, with `Backoff::spin_heavy` (a step that
/// grows, `pause` while it is small, `yield_now` after). `body` comes after the step's
/// test, `after` where the loop ends.
fn backoff(
    a: &mut CodeAssembler,
    body: impl FnOnce(&mut CodeAssembler, CodeLabel) -> Result<(), IcedError>,
    after: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>,
) -> Result<(), IcedError> {
    let (mut yield_, mut step, mut test, mut done, mut got) = (
        a.create_label(),
        a.create_label(),
        a.create_label(),
        a.create_label(),
        a.create_label(),
    );
    a.xor(ebx, ebx)?;
    a.xor(r12d, r12d)?;
    a.jmp(test)?;
    a.set_label(&mut yield_)?;
    a.call(qword_ptr(got))?;
    a.set_label(&mut step)?;
    a.lea(eax, ptr(r12 * 2 + 1))?;
    a.inc(r12d)?;
    a.mov(rcx, qword_ptr(r15))?; // the load: instruction 6
    a.add(ebx, eax)?;
    a.test(cl, 1)?;
    a.jne(done)?;
    a.set_label(&mut test)?;
    a.cmp(r12d, 7)?;
    a.jae(yield_)?;
    body(a, step)?;
    a.pause()?;
    a.jmp(step)?;
    a.set_label(&mut done)?;
    after(a)?;
    a.set_label(&mut got)?;
    a.dq(&[0])
}

/// [`masks`] of a backoff wait with no more in its body, `after` where it ends.
fn masks_of_wait(after: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Vec<Regs> {
    masks(|a| backoff(a, |_, _| Ok(()), after))
}

#[test]
fn a_backoff_wait_leaves_its_step_out_of_the_hash() {
    let found = masks_of_wait(|a| {
        a.mov(ebx, dword_ptr(r15 + 8))?;
        a.xor(r12d, r12d)?;
        a.xor(eax, eax)?;
        a.ret()
    });
    // rax, rbx, r12 (rcx is the loaded value)
    assert_eq!(found[6], bit(0) | bit(3) | bit(12), "{found:x?}");
    assert_eq!(found.iter().filter(|&&m| m != 0).count(), 1);
}

#[test]
fn a_call_after_the_wait_is_not_passed_the_step_in_rax() {
    // libtest's `Slot::wait_write`: the step left in eax reaches a call to memcpy, which is
    // passed rdi, rsi, rdx (al would be a variadic call's vector count, set for the call)
    let found = masks_of_wait(|a| {
        a.mov(ebx, dword_ptr(r15 + 8))?;
        a.xor(r12d, r12d)?;
        a.lea(rdi, ptr(r15 + 16))?;
        a.call(0x2000)?;
        a.ret()
    });
    assert_eq!(found[6], bit(0) | bit(3) | bit(12), "{found:x?}");
    // but a call passed the step in rdi is
    let found = masks_of_wait(|a| {
        a.mov(ebx, dword_ptr(r15 + 8))?;
        a.mov(edi, eax)?;
        a.xor(r12d, r12d)?;
        a.call(0x2000)?;
        a.ret()
    });
    assert!(found.iter().all(|&m| m == 0), "{found:x?}");
}

#[test]
fn a_backoff_wait_whose_step_gets_out_is_no_await_loop() {
    // the step is returned
    let found = masks_of_wait(|a| {
        a.mov(eax, r12d)?;
        a.ret()
    });
    assert!(found.iter().all(|&m| m == 0), "{found:x?}");
    // the step ends the loop (it would give up waiting)
    let found = masks(|a| {
        backoff(
            a,
            |a, _| {
                let mut out = a.create_label();
                a.cmp(r12d, 100)?;
                a.jae(out)?;
                a.pause()?;
                a.set_label(&mut out)?;
                a.ret()
            },
            |a| {
                a.xor(r12d, r12d)?;
                a.xor(ebx, ebx)?;
                a.xor(eax, eax)?;
                a.ret()
            },
        )
    });
    assert!(found.iter().all(|&m| m == 0), "{found:x?}");
    // the call is given the step
    let found = masks(|a| {
        backoff(
            a,
            |a, step| {
                a.mov(edi, r12d)?;
                a.call(0x2000)?;
                a.jmp(step)
            },
            |a| {
                a.xor(r12d, r12d)?;
                a.xor(ebx, ebx)?;
                a.xor(eax, eax)?;
                a.ret()
            },
        )
    });
    assert!(found.iter().all(|&m| m == 0), "{found:x?}");
}

#[test]
fn a_decrementing_counter_ends_at_one() {
    let found = analyse(|a| {
        let mut l = a.create_label();
        let mut t = a.create_label();
        a.mov(r8d, 100)?;
        a.set_label(&mut l)?;
        a.mov(eax, dword_ptr(rdi))?;
        a.test(eax, eax)?;
        a.je(t)?;
        a.pause()?;
        a.sub(r8d, 1)?;
        a.jne(l)?;
        a.set_label(&mut t)?;
        a.xor(r8d, r8d)?;
        a.test(eax, eax)?;
        a.ret()
    });
    assert_eq!(found[1], Some((9, spin_value::ONE)), "{found:?}");
}
