// SPDX-License-Identifier: GPL-2.0
/*
 * verifier.bpf.c: the kernel verifier's rules the simulator must give without the
 * kernel (issue 39), one case per -DCASE_..., each in ssthresh; tests/verifier.rs
 * checks the simulator's verdict and, as root on a kernel with BTF, the kernel's.
 *
 * `vals` is an ARRAY of 4 values of two u64s (value_size 16). With no CASE, ssthresh
 * stores cwnd into vals[1].v[0] and cwnd + 1 into vals[1].v[1] and returns their sum
 * through a bounded loop, 2 * cwnd + 1, and leaves vals[2] alone.
 *
 *   CASE_MAP_CONST_OOB   v[2] of vals[1]: off 16, one past the value; the kernel
 *                        refuses it at load ("invalid access to map value,
 *                        value_size=16 off=16 size=8");
 *   CASE_MAP_VAR_OOB     v[cwnd % 4] (clang: `& 3`): offsets 0..24, the last past the
 *                        value; both refuse it at load ("invalid access to map value,
 *                        value_size=16 off=24 size=8");
 *   CASE_MAP_VAR_AND     v[cwnd & 1]: offsets 0..8, inside: both accept it;
 *   CASE_MAP_VAR_UNBOUNDED v[cwnd]: offsets up to 8 * (2^32 - 1), past BPF_MAX_VAR_OFF:
 *                        "R0 unbounded memory access";
 *   CASE_MAP_VAR_CHECKED if (cwnd < 2) v[cwnd]: the branch bounds the index: accepted;
 *   CASE_STACK_FP0/_FP8  a store at r10 + 0 / r10 + 8, above the frame;
 *   CASE_LOOP_FRESH      while (cwnd > 1) spins++: every pass reads cwnd afresh, so
 *                        the verifier cannot bound it;
 *   CASE_LOOP_COUNTED    for (i = 0; i < cwnd; i++): cwnd is any u32, so no pass
 *                        decides the exit; both refuse it ("BPF program is too large");
 *   CASE_LOOP_CONST      for (i = 0; i < 64; i++): accepted, returns 64;
 *   CASE_LOOP_CLAMPED    for (i = 0; i < cwnd && i < 16; i++): accepted, min(cwnd, 16);
 *   CASE_LOOP_MIN        n = min(cwnd, 64), then i < n: accepted, min(cwnd, 64);
 *   CASE_TAIL_CALL       bpf_tail_call into `jmp`, whose slot 0 holds ssthresh itself:
 *                        `calls` counts the passes, 1 + MAX_TAIL_CALL_CNT (33) = 34,
 *                        then the last call falls through and ssthresh returns 7;
 *   CASE_TAIL_CALL_EMPTY the same call with `jmp` empty: falls through at once;
 *   CASE_TAIL_CALL_OTHER slot 0 holds undo_cwnd, a program of another member: the
 *                        kernel refuses to put it there (-EINVAL).
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PROG_ARRAY 3

struct pair {
	__u64 v[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct pair);
} vals SEC(".maps");

__u32 calls;

#if defined(CASE_TAIL_CALL) || defined(CASE_TAIL_CALL_EMPTY) || defined(CASE_TAIL_CALL_OTHER)
__u32 verifier_ssthresh(unsigned long long *ctx);
__u32 verifier_undo_cwnd(unsigned long long *ctx);

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__uint(key_size, sizeof(__u32));
	__array(values, __u32(unsigned long long *));
} jmp SEC(".maps") = {
#if defined(CASE_TAIL_CALL)
	.values = { [0] = (void *)&verifier_ssthresh },
#elif defined(CASE_TAIL_CALL_OTHER)
	.values = { [0] = (void *)&verifier_undo_cwnd },
#endif
};
#endif

SEC("struct_ops")
__u32 BPF_PROG(verifier_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 one = 1;
	__u64 *v = bpf_map_lookup_elem(&vals, &one);

	if (!v)
		return 2;
#if defined(CASE_MAP_CONST_OOB)
	v[2] = tp->snd_cwnd;
	return 3;
#elif defined(CASE_MAP_VAR_OOB)
	v[tp->snd_cwnd % 4] = tp->snd_cwnd;
	return 3;
#elif defined(CASE_MAP_VAR_AND)
	v[tp->snd_cwnd & 1] = tp->snd_cwnd;
	return 3;
#elif defined(CASE_MAP_VAR_UNBOUNDED)
	v[tp->snd_cwnd] = tp->snd_cwnd;
	return 3;
#elif defined(CASE_MAP_VAR_CHECKED)
	__u32 k = tp->snd_cwnd;

	if (k < 2)
		v[k] = tp->snd_cwnd;
	return 3;
#elif defined(CASE_STACK_FP0)
	asm volatile("*(u64 *)(r10 + 0) = %[x]" ::[x] "r"((__u64)tp->snd_cwnd) : "memory");
	return 3;
#elif defined(CASE_STACK_FP8)
	asm volatile("*(u64 *)(r10 + 8) = %[x]" ::[x] "r"((__u64)tp->snd_cwnd) : "memory");
	return 3;
#elif defined(CASE_LOOP_FRESH)
	volatile __u32 spins = 0;

	while (tp->snd_cwnd > 1)
		spins++;
	return spins;
#elif defined(CASE_LOOP_COUNTED)
	volatile __u32 spins = 0;
	__u32 i, n = tp->snd_cwnd;

#pragma clang loop unroll(disable)
	for (i = 0; i < n; i++)
		spins++;
	return spins;
#elif defined(CASE_LOOP_CONST)
	volatile __u32 spins = 0;
	__u32 i;

#pragma clang loop unroll(disable)
	for (i = 0; i < 64; i++)
		spins++;
	return spins;
#elif defined(CASE_LOOP_CLAMPED)
	volatile __u32 spins = 0;
	__u32 i, n = tp->snd_cwnd;

#pragma clang loop unroll(disable)
	for (i = 0; i < n && i < 16; i++)
		spins++;
	return spins;
#elif defined(CASE_LOOP_MIN)
	volatile __u32 spins = 0;
	__u32 i, n = tp->snd_cwnd;

	if (n > 64)
		n = 64;
#pragma clang loop unroll(disable)
	for (i = 0; i < n; i++)
		spins++;
	return spins;
#elif defined(CASE_TAIL_CALL) || defined(CASE_TAIL_CALL_EMPTY) || defined(CASE_TAIL_CALL_OTHER)
	calls++;
	bpf_tail_call(ctx, &jmp, 0);
	return 7;
#else
	__u64 sum = 0;
	__u32 i;

	v[0] = tp->snd_cwnd;
	v[1] = tp->snd_cwnd + 1;
#pragma clang loop unroll(disable)
	for (i = 0; i < 2; i++)
		sum += v[i];
	return sum;
#endif
}

SEC("struct_ops")
void BPF_PROG(verifier_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(verifier_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops verifier = {
	.ssthresh = (void *)verifier_ssthresh,
	.cong_avoid = (void *)verifier_cong_avoid,
	.undo_cwnd = (void *)verifier_undo_cwnd,
	.name = "bpf_verifier",
};
