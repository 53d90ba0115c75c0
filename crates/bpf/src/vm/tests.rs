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

fn exec(prog: &[Insn], budget: u64) -> Result<u64, Fault> {
    verify::check(prog).map_err(|(pc, why)| Fault { pc, why })?;
    run(prog, 0, 0, &mut Memory::new(vec![]), &mut NoCalls, budget)
}

const EXIT_: Insn = ins(EXIT, 0, 0, 0, 0);

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

#[test]
fn superinstructions_compute_both_steps_and_a_jump_into_a_pair_runs_its_second_alone() {
    let p = [
        // 0-1: r1 = 0x1_8000_0001
        ins(LD_IMM64, 1, 0, 0, 0x8000_0001u32 as i32),
        ins(0, 0, 0, 0, 1),
        // 2-3: r1 <<= 32; r1 >>= 32 (zero-extend) -> 0x8000_0001
        ins(0x67, 1, 0, 0, 32),
        ins(0x77, 1, 0, 0, 32),
        // 4-6: r2 = r1; r2 <<= 32; r2 s>>= 32 -> 0xffff_ffff_8000_0001
        ins(0xbf, 2, 1, 0, 0),
        ins(0x67, 2, 0, 0, 32),
        ins(0xc7, 2, 0, 0, 32),
        // 7-8: r3 = r2; r3 &= 0xff -> 1
        ins(0xbf, 3, 2, 0, 0),
        ins(0x57, 3, 0, 0, 0xff),
        // 9-10: r3 &= 0xf; if r3 != 1 goto 15 (not taken)
        ins(0x57, 3, 0, 0, 0xf),
        ins(0x55, 3, 0, 4, 1),
        // 11-12: r4 = 5; if r3 > r4 goto 15 (not taken)
        ins(0xb7, 4, 0, 0, 5),
        ins(0x2d, 3, 4, 2, 0),
        // 13-14: r4 = -1; if r3 s> r4 goto 17 (taken)
        ins(0xb7, 4, 0, 0, -1),
        ins(0x6d, 3, 4, 2, 0),
        // 15-16: r0 = 99; exit
        ins(0xb7, 0, 0, 0, 99),
        EXIT_,
        // 17-20: spill r2 (u64) and r1 (u32), read them back into r6, r7
        ins(0x7b, 10, 2, -8, 0),
        ins(0x63, 10, 1, -16, 0),
        ins(0x79, 6, 10, -8, 0),
        ins(0x61, 7, 10, -16, 0),
        // 21-22: r5 = 0x1_0000_0007
        ins(LD_IMM64, 5, 0, 0, 7),
        ins(0, 0, 0, 0, 1),
        // 23: if r3 == 1 goto 25, the second half of the pair 24-25: r5 >>= 32 alone -> 1
        ins(0x15, 3, 0, 1, 1),
        ins(0x67, 5, 0, 0, 32),
        ins(0x77, 5, 0, 0, 32),
        // 26-28: r0 = r6; r0 += r7 (0xffff_ffff_8000_0001 + 0x8000_0001 wraps to 2); r0 += r5
        ins(0xbf, 0, 6, 0, 0),
        ins(0x0f, 0, 7, 0, 0),
        ins(0x0f, 0, 5, 0, 0),
        EXIT_,
    ];
    assert_eq!(exec(&p, 100), Ok(3));
    let fused: Vec<u8> = [2, 4, 7, 9, 11, 13, 19, 24, 26]
        .map(|k| Code::new(&p).ops[k].code)
        .to_vec();
    assert_eq!(
        fused,
        [
            F_ZEXT,
            F_MOV_LSHI,
            F_MOV_ANDI,
            F_ANDI_JNE,
            F_MOVI_JGT,
            F_MOVI_JSGT,
            F_LDXDW_LDXW,
            F_ZEXT,
            F_MOV_ADD
        ]
    );

    let p = [
        // 0-3: r1 = 0x8000_0001; r1 <<= 32; r1 s>>= 32 -> 0xffff_ffff_8000_0001
        ins(LD_IMM64, 1, 0, 0, 0x8000_0001u32 as i32),
        ins(0, 0, 0, 0, 0),
        ins(0x67, 1, 0, 0, 32),
        ins(0xc7, 1, 0, 0, 32),
        // 4: *(u64 *)(r10 - 8) = r1
        ins(0x7b, 10, 1, -8, 0),
        // 5-6: r2 = *(u32 *)(r10 - 8) (0x8000_0001); r3 = r2
        ins(0x61, 2, 10, -8, 0),
        ins(0xbf, 3, 2, 0, 0),
        // 7-8: r4 = r5 = *(u64 *)(r10 - 8)
        ins(0x79, 4, 10, -8, 0),
        ins(0x79, 5, 10, -8, 0),
        // 9-10: r6 = *(u32 *)(r10 - 4) (0xffff_ffff); r7 = *(u64 *)(r10 - 8)
        ins(0x61, 6, 10, -4, 0),
        ins(0x79, 7, 10, -8, 0),
        // 11-12: r6 &= 0x10; if r6 == 0x10 goto 14 (taken); 13: r2 = 0 (skipped)
        ins(0x57, 6, 0, 0, 0x10),
        ins(0x15, 6, 0, 1, 0x10),
        ins(0xb7, 2, 0, 0, 0),
        // 14-19: r0 = r1 - r4 + r3 + r6 - r7 + r2
        //      = 0 + 0x8000_0001 + 0x10 - 0xffff_ffff_8000_0001 + 0x8000_0001
        //      = 0x1_0000_0010 + 0x8000_0001 = 0x1_8000_0011
        ins(0xbf, 0, 1, 0, 0),
        ins(0x1f, 0, 4, 0, 0),
        ins(0x0f, 0, 3, 0, 0),
        ins(0x0f, 0, 6, 0, 0),
        ins(0x1f, 0, 7, 0, 0),
        ins(0x0f, 0, 2, 0, 0),
        EXIT_,
    ];
    assert_eq!(exec(&p, 100), Ok(0x1_8000_0011));
    // Each pair above is fused (what this test is for).
    let fused: Vec<u8> = [2, 5, 7, 9, 11].map(|k| Code::new(&p).ops[k].code).to_vec();
    assert_eq!(
        fused,
        [F_SEXT, F_LDXW_MOV, F_LDXDW_LDXDW, F_LDXW_LDXDW, F_ANDI_JEQ]
    );

    let p = [
        // 0: r1 = 0xabcd
        ins(0xb7, 1, 0, 0, 0xabcd),
        // 1-3: r2 = r1; r2 <<= 52; r2 >>= 60 -> bits 8..11 of r1 = 0xb
        ins(0xbf, 2, 1, 0, 0),
        ins(0x67, 2, 0, 0, 52),
        ins(0x77, 2, 0, 0, 60),
        // 4-6: r3 = r1; r3 &= 0xf0 (0xc0); if r3 != 0xc0 goto 16 (not taken)
        ins(0xbf, 3, 1, 0, 0),
        ins(0x57, 3, 0, 0, 0xf0),
        ins(0x55, 3, 0, 9, 0xc0),
        // 7-9: r4 = 5; r5 = r2; r5 += r4 -> 16
        ins(0xb7, 4, 0, 0, 5),
        ins(0xbf, 5, 2, 0, 0),
        ins(0x0f, 5, 4, 0, 0),
        // 10-11: r6 = r5; r6 += -1 -> 15
        ins(0xbf, 6, 5, 0, 0),
        ins(0x07, 6, 0, 0, -1),
        // 12-13: r7 = r1; r7 &= r6 -> 0xd
        ins(0xbf, 7, 1, 0, 0),
        ins(0x5f, 7, 6, 0, 0),
        // 14-15: r1 >>= 8 (0xab); if r1 >= r7 goto 18 (taken)
        ins(0x77, 1, 0, 0, 8),
        ins(0x3d, 1, 7, 2, 0),
        // 16-17: r0 = 99; exit
        ins(0xb7, 0, 0, 0, 99),
        EXIT_,
        // 18-21: r0 = r7 + r2 + r5 = 0xd + 0xb + 16 = 40
        ins(0xbf, 0, 7, 0, 0),
        ins(0x0f, 0, 2, 0, 0),
        ins(0x0f, 0, 5, 0, 0),
        EXIT_,
    ];
    assert_eq!(exec(&p, 100), Ok(40));
    let fused: Vec<u8> = [1, 4, 7, 10, 12, 14]
        .map(|k| Code::new(&p).ops[k].code)
        .to_vec();
    assert_eq!(
        fused,
        [
            F_MOV_LSH_RSH,
            F_MOV_ANDI_JNE,
            F_MOVI_MOV_ADD,
            F_MOV_ADDI,
            F_MOV_AND,
            F_RSHI_JGE
        ]
    );
}

#[test]
fn a_fault_in_the_second_load_of_a_pair_names_its_own_pc() {
    // r6 = *(u64 *)(r10 - 8); r7 = *(u32 *)(r1 + 0) with r1 = 0, no region.
    let p = [ins(0x79, 6, 10, -8, 0), ins(0x61, 7, 1, 0, 0), EXIT_];
    let e = exec(&p, 100).unwrap_err();
    assert_eq!(e.pc, 1);
    assert!(e.why.contains("invalid address"), "{}", e.why);
}

/// `bpf_loop(3, <function at 6 returning ret>, 0, 0)`, the pointer from `fptr`.
fn loop_prog(fptr: [Insn; 2], ret: i32) -> Vec<Insn> {
    vec![
        ins(0xb7, 1, 0, 0, 3),
        fptr[0],
        fptr[1],
        ins(0xb7, 4, 0, 0, 0),
        ins(CALL, 0, PSEUDO_KFUNC_CALL, 0, Call::Loop as i32),
        EXIT_,
        ins(0xb7, 0, 0, 0, ret),
        EXIT_,
    ]
}

#[test]
fn bpf_loop_takes_a_function_pointer_and_refuses_a_forged_one() {
    // r2 = &function at 6 (BPF_PSEUDO_FUNC, pc-relative: 1 + 1 + 4).
    let func = [ins(LD_IMM64, 2, PSEUDO_FUNC, 0, 4), ins(0, 0, 0, 0, 0)];
    assert_eq!(exec(&loop_prog(func, 0), 100), Ok(3));
    assert_eq!(exec(&loop_prog(func, 1), 100), Ok(1));
    // The same bits as a plain constant are not a function.
    let forged = [ins(LD_IMM64, 2, 0, 0, 6), ins(0, 0, 0, 0, -1)];
    let e = exec(&loop_prog(forged, 0), 100).unwrap_err();
    assert_eq!(e.pc, 4);
    assert!(e.why.contains("is not a function"), "{}", e.why);
    // The functions are [0, 6) and [6, 8); a pointer to 7 is not a function's start.
    let functions = [(0, 6), (6, 8)];
    assert!(verify::check_kernel_rules(&loop_prog(func, 0), &functions).is_ok());
    let mid = [ins(LD_IMM64, 2, PSEUDO_FUNC, 0, 5), ins(0, 0, 0, 0, 0)];
    let (pc, why) = verify::check_kernel_rules(&loop_prog(mid, 0), &functions).unwrap_err();
    assert_eq!(pc, 1);
    assert!(why.contains("not the start of a function"), "{why}");
}
