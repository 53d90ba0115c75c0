// SPDX-License-Identifier: GPL-2.0
/*
 * maps.bpf.c: maps (ARRAY, HASH, PERCPU_ARRAY, SK_STORAGE), bpf_printk and the socket
 * options a tcp_congestion_ops program may use. Each callback writes what it saw into
 * cwnd/ssthresh so tests/maps.rs can check it by hand:
 *   init          creates the socket's storage, numbers it (1, 2, ...), prints
 *                 "init <n> cwnd <cwnd>";
 *   cong_avoid    acks[acked % 4] += 1 (ARRAY); inserts cwnd into `seen` (HASH, 2
 *                 entries, BPF_NOEXIST) and returns the result in ssthresh; adds acked
 *                 to the socket's own count (SK_STORAGE) and sets cwnd to it (999 when
 *                 the socket has no storage); total[0] += acked (PERCPU_ARRAY);
 *   ssthresh      acks[1] * 100 + acks[2];
 *   undo_cwnd     77 if acks[5] (beyond max_entries) is NULL, else 0;
 *   set_state     prints the getsockopt(TCP_CONGESTION) name, sets SO_MAX_PACING_RATE;
 *   in_ack_event  prints four numbers (bpf_trace_vprintk) and total[0];
 *   release       deletes the socket's storage.
 * -DCASE_SETSOCKOPT_IN_RELEASE / -DCASE_PID call what the kernel refuses there.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_SK_STORAGE 24
#define BPF_F_NO_PREALLOC 1
#define BPF_NOEXIST 1
#define BPF_SK_STORAGE_GET_F_CREATE 1
#define SOL_SOCKET 1
#define SO_MAX_PACING_RATE 47
#define SOL_TCP 6
#define TCP_CONGESTION 13

struct sk_count {
	__u32 id;
	__u32 acks;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} acks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} total SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sk_count);
} counts SEC(".maps");

__u32 sockets;

SEC("struct_ops")
void BPF_PROG(maps_init, struct sock *sk)
{
	struct sk_count *c;

	c = bpf_sk_storage_get(&counts, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!c)
		return;
	c->id = ++sockets;
	bpf_printk("init %d cwnd %u", c->id, tcp_sk(sk)->snd_cwnd);
}

SEC("struct_ops")
void BPF_PROG(maps_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 idx = acked % 4, key = tp->snd_cwnd, one = 1, zero = 0;
	struct sk_count *c;
	__u64 *v;

	v = bpf_map_lookup_elem(&acks, &idx);
	if (v)
		*v += 1;
	tp->snd_ssthresh = bpf_map_update_elem(&seen, &key, &one, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&total, &zero);
	if (v)
		*v += acked;
	c = bpf_sk_storage_get(&counts, sk, 0, 0);
	if (c) {
		c->acks += acked;
		tp->snd_cwnd = c->acks;
	} else {
		tp->snd_cwnd = 999;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(maps_ssthresh, struct sock *sk)
{
	__u32 one = 1, two = 2;
	__u64 *a = bpf_map_lookup_elem(&acks, &one);
	__u64 *b = bpf_map_lookup_elem(&acks, &two);

	return (a ? *a : 0) * 100 + (b ? *b : 0);
}

SEC("struct_ops")
__u32 BPF_PROG(maps_undo_cwnd, struct sock *sk)
{
	__u32 five = 5;

	return bpf_map_lookup_elem(&acks, &five) ? 0 : 77;
}

SEC("struct_ops")
void BPF_PROG(maps_set_state, struct sock *sk, __u8 new_state)
{
	char name[16] = {};
	__u64 rate = 12345;

	bpf_getsockopt(sk, SOL_TCP, TCP_CONGESTION, name, sizeof(name));
	bpf_printk("ca %s", name);
	bpf_setsockopt(sk, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
}

SEC("struct_ops")
void BPF_PROG(maps_in_ack_event, struct sock *sk, __u32 flags)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&total, &zero);

	bpf_printk("%d %d %d %d", 1, 2, 3, 4);
	if (t)
		bpf_printk("total %llu", *t);
}

SEC("struct_ops")
void BPF_PROG(maps_release, struct sock *sk)
{
#ifdef CASE_SETSOCKOPT_IN_RELEASE
	__u64 rate = 1;

	bpf_setsockopt(sk, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
#endif
#ifdef CASE_PID
	sockets += bpf_get_current_pid_tgid();
#endif
	bpf_sk_storage_delete(&counts, sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops maps_test = {
	.init = (void *)maps_init,
	.ssthresh = (void *)maps_ssthresh,
	.undo_cwnd = (void *)maps_undo_cwnd,
	.cong_avoid = (void *)maps_cong_avoid,
	.set_state = (void *)maps_set_state,
	.in_ack_event = (void *)maps_in_ack_event,
	.release = (void *)maps_release,
	.name = "maps_test",
};
