//! The interpreter on hand-assembled programs: the kernel's arithmetic corner cases
//! (kernel/bpf/core.c) and the budget.

use super::*;
use crate::vm::memory::Memory;

struct NoCalls;
impl Host for NoCalls {
    fn call(&mut self, _: Call, _: i16, _: [u64; 5], _: &mut Memory) -> Result<u64, String> {
        Err("no calls here".into())
    }
}

fn ins(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        dst,
        src,
        off,
        imm,
    }
}

fn exec(prog: &[Insn], budget: u64) -> Result<u64, Fault> {
    verify::check(prog).map_err(|(pc, why)| Fault { pc, why })?;
    run(prog, 0, 0, &mut Memory::new(vec![]), &mut NoCalls, budget)
}

const EXIT_: Insn = Insn {
    code: EXIT,
    dst: 0,
    src: 0,
    off: 0,
    imm: 0,
};

#[test]
fn division_and_modulo_by_zero_follow_the_kernel() {
    // r0 = 7; r1 = 0; r0 /= r1 -> 0
    let div = [
        ins(0xb7, 0, 0, 0, 7),
        ins(0xb7, 1, 0, 0, 0),
        ins(0x3f, 0, 1, 0, 0),
        EXIT_,
    ];
    assert_eq!(exec(&div, 100), Ok(0));
    // r0 = 7; r1 = 0; r0 %= r1 -> 7 (the dividend)
    let rem = [
        ins(0xb7, 0, 0, 0, 7),
        ins(0xb7, 1, 0, 0, 0),
        ins(0x9f, 0, 1, 0, 0),
        EXIT_,
    ];
    assert_eq!(exec(&rem, 100), Ok(7));
}

#[test]
fn alu32_zero_extends_and_arsh_keeps_the_sign() {
    // r0 = -1 (64-bit mov sign-extends the imm); w0 += 1 -> 0, upper half cleared.
    let p = [ins(0xb7, 0, 0, 0, -1), ins(0x04, 0, 0, 0, 1), EXIT_];
    assert_eq!(exec(&p, 100), Ok(0));
    // w0 = -1 (32-bit mov): 0x0000_0000_ffff_ffff
    let p = [ins(0xb4, 0, 0, 0, -1), EXIT_];
    assert_eq!(exec(&p, 100), Ok(0xffff_ffff));
    // r0 = -16; r0 s>>= 2 -> -4
    let p = [ins(0xb7, 0, 0, 0, -16), ins(0xc7, 0, 0, 0, 2), EXIT_];
    assert_eq!(exec(&p, 100), Ok(-4i64 as u64));
    // r0 = 0x0102; be16 -> 0x0201
    let p = [ins(0xb7, 0, 0, 0, 0x0102), ins(0xdc, 0, 0, 0, 16), EXIT_];
    assert_eq!(exec(&p, 100), Ok(0x0201));
}

#[test]
fn jmp32_compares_the_low_halves_signed() {
    // r1 = 0x1_0000_0000 | 0xffff_ffff (low half -1): `if w1 s< 0 goto +1` is taken.
    let p = [
        ins(LD_IMM64, 1, 0, 0, -1),
        ins(0, 0, 0, 0, 1),
        ins(0xb7, 0, 0, 0, 1),
        ins(0xc6, 1, 0, 1, 0),
        ins(0xb7, 0, 0, 0, 2),
        EXIT_,
    ];
    assert_eq!(exec(&p, 100), Ok(1));
}

#[test]
fn an_endless_loop_exhausts_the_budget_at_its_jump() {
    // 0: r0 = 0; 1: r0 += 1; 2: goto 1. Charged 3 slots to the first jump, then 2 per
    // round: 3 + 2 + 2 + 2 = 9 <= 10, the next round would make 11.
    let p = [
        ins(0xb7, 0, 0, 0, 0),
        ins(0x07, 0, 0, 0, 1),
        ins(0x05, 0, 0, -2, 0),
        EXIT_,
    ];
    let e = exec(&p, 10).unwrap_err();
    assert_eq!(
        e,
        Fault {
            pc: 2,
            why: "instruction budget of 10 exhausted".into()
        }
    );
}

#[test]
fn stack_access_out_of_the_frame_region_is_refused() {
    // *(u64 *)(r10 + 8) = 1: above the top of frame 0 is frame 1's space, inside the
    // stack region; 8 frames up is past its end.
    let p = [ins(0x7a, 10, 0, 8, 1), ins(0xb7, 0, 0, 0, 0), EXIT_];
    assert_eq!(exec(&p, 100), Ok(0));
    let p = [ins(0x7a, 10, 0, 4000, 1), EXIT_];
    let e = exec(&p, 100).unwrap_err();
    assert_eq!(e.pc, 0);
    assert!(e.why.contains("out of bounds (stack)"), "{}", e.why);
}
