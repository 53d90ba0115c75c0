/* SPDX-License-Identifier: MIT */
/*
 * tcplab_cc.h: the kernel structures a congestion control written as a BPF
 * struct_ops `tcp_congestion_ops` program touches, and nothing else.
 *
 * One .bpf.c built against this header runs in two places:
 *  - tcplab's simulator (crates/bpf), which relocates every field access against
 *    its own byte image of the socket, by struct and field name;
 *  - a Linux 6.18 kernel (tcplab-bpfload, libbpf 1.7), where libbpf relocates the
 *    same accesses against /sys/kernel/btf/vmlinux.
 * Both work because every struct below carries preserve_access_index: clang then
 * records each access as "struct tcp_sock, field snd_cwnd" (a CO-RE relocation)
 * instead of a fixed offset. So field NAMES and their integer widths must be the
 * kernel's (checked against 6.18's vmlinux BTF); their order, the offsets, and
 * the fields left out do not matter.
 *
 * Units are the kernel's: snd_una/snd_nxt are byte sequence numbers (u32, wrap),
 * srtt_us is the smoothed RTT in us shifted left by 3, tcp_mstamp is in us,
 * tcp_jiffies32 (lsndtime, snd_cwnd_stamp) counts jiffies, HZ per second. HZ is
 * the kconfig extern CONFIG_HZ, as in the kernel's own BPF programs: libbpf fills
 * in the running kernel's value (250 on Debian's and this project's test kernel),
 * the simulator its simulated one ([tcp] hz, default 1000). Convert with
 * msecs_to_jiffies()/usecs_to_jiffies(), never with a constant.
 *
 * What the simulator lets a program write is the kernel's list
 * (bpf_tcp_ca_btf_struct_access, net/ipv4/bpf_tcp_ca.c): snd_cwnd,
 * snd_cwnd_cnt, snd_cwnd_stamp, snd_ssthresh, ecn_flags, app_limited,
 * sk_pacing_rate, sk_pacing_status, icsk_ca_priv, icsk_ack.pending.
 */
#ifndef TCPLAB_CC_H
#define TCPLAB_CC_H

typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef short __s16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef __u8 u8;
typedef __s8 s8;
typedef __u16 u16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;
typedef _Bool bool;
enum { false = 0, true = 1 };

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* include/net/inet_connection_sock.h: ICSK_CA_PRIV_SIZE is 13 u64 on 6.18. */
#define ICSK_CA_PRIV_SIZE (13 * sizeof(__u64))
#define TCP_INFINITE_SSTHRESH 0x7fffffff
#define TCP_ECN_OK 1
#define TCP_ECN_QUEUE_CWR 2
#define TCP_ECN_DEMAND_CWR 4
#define TCP_CONG_NEEDS_ECN 0x2
#define ICSK_ACK_NOW 8
#define USEC_PER_SEC 1000000UL
#define USEC_PER_MSEC 1000UL
/* CONFIG_HZ of the kernel the program runs in (kernel/Kconfig.hz: 100, 250, 300
 * or 1000), filled at load time. */
extern unsigned long CONFIG_HZ __kconfig;
#define HZ CONFIG_HZ
#define MSEC_PER_SEC 1000UL
#define TCP_CA_NAME_MAX 16

enum tcp_ca_state {
	TCP_CA_Open = 0,
	TCP_CA_Disorder = 1,
	TCP_CA_CWR = 2,
	TCP_CA_Recovery = 3,
	TCP_CA_Loss = 4,
};

enum tcp_ca_event {
	CA_EVENT_TX_START = 0,
	CA_EVENT_CWND_RESTART = 1,
	CA_EVENT_COMPLETE_CWR = 2,
	CA_EVENT_LOSS = 3,
	CA_EVENT_ECN_NO_CE = 4,
	CA_EVENT_ECN_IS_CE = 5,
};

enum tcp_ca_ack_event_flags {
	CA_ACK_SLOWPATH = 1,
	CA_ACK_WIN_UPDATE = 2,
	CA_ACK_ECE = 4,
};

enum sk_pacing {
	SK_PACING_NONE = 0,
	SK_PACING_NEEDED = 1,
	SK_PACING_FQ = 2,
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct sock_common {
	unsigned short skc_family;
};

struct sock {
	struct sock_common __sk_common;
	__u32 sk_pacing_status; /* enum sk_pacing */
	unsigned long sk_pacing_rate; /* bytes per second */
	unsigned long sk_max_pacing_rate;
	__u8 sk_pacing_shift;
};

struct inet_sock {
	struct sock sk;
};

struct inet_connection_sock {
	struct inet_sock icsk_inet;
	__u8 icsk_ca_state : 5;
	struct {
		__u8 pending;
	} icsk_ack;
	__u64 icsk_ca_priv[13];
};

struct minmax_sample {
	__u32 t;
	__u32 v;
};

struct minmax {
	struct minmax_sample s[3];
};

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	__u32 mss_cache;
	__u32 snd_cwnd;
	__u32 snd_ssthresh;
	__u32 snd_cwnd_cnt;
	__u32 snd_cwnd_clamp;
	__u32 snd_cwnd_stamp; /* tcp_jiffies32 */
	__u32 lsndtime; /* tcp_jiffies32 */
	__u32 prior_cwnd;
	__u32 prior_ssthresh;
	__u32 packets_out;
	__u32 sacked_out;
	__u32 lost_out;
	__u32 retrans_out;
	__u32 max_packets_out;
	__u8 is_cwnd_limited : 1; /* read with BPF_CORE_READ_BITFIELD */
	__u32 snd_una; /* bytes */
	__u32 snd_nxt; /* bytes */
	__u32 delivered;
	__u32 delivered_ce;
	__u32 lost;
	__u32 app_limited;
	__u32 srtt_us; /* smoothed RTT << 3, in us */
	struct minmax rtt_min;
	__u64 tcp_mstamp; /* us */
	__u64 tcp_clock_cache; /* ns */
	__u64 delivered_mstamp; /* us: when delivered last changed */
	__u64 tcp_wstamp_ns; /* ns: earliest departure time of the next skb */
	__u8 ecn_flags;
	__u32 rcv_nxt; /* bytes; the receiving side's next expected sequence number */
	__u32 high_seq; /* bytes: snd_nxt when the CWR/Recovery/Loss episode began */
	__u32 prr_delivered; /* PRR (RFC 6937): segments delivered in this reduction */
	__u32 prr_out; /* PRR: segments sent in this reduction */
	__u32 reordering; /* segments: the reordering degree, DupThresh (3 at first) */
};

struct rate_sample {
	__u64 prior_mstamp;
	__u32 prior_delivered;
	__u32 prior_delivered_ce;
	__s32 delivered;
	__s32 delivered_ce;
	long interval_us;
	__u32 snd_interval_us;
	__u32 rcv_interval_us;
	long rtt_us;
	int losses;
	__u32 acked_sacked;
	__u32 prior_in_flight;
	bool is_app_limited;
	bool is_retrans;
	bool is_ack_delayed;
};

struct ack_sample {
	__u32 pkts_acked;
	__s32 rtt_us;
	__u32 in_flight;
};

struct tcp_congestion_ops {
	__u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
	void (*set_state)(struct sock *sk, __u8 new_state);
	void (*cwnd_event)(struct sock *sk, enum tcp_ca_event ev);
	void (*in_ack_event)(struct sock *sk, __u32 flags);
	void (*pkts_acked)(struct sock *sk, const struct ack_sample *sample);
	__u32 (*min_tso_segs)(struct sock *sk);
	void (*cong_control)(struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs);
	__u32 (*undo_cwnd)(struct sock *sk);
	__u32 (*sndbuf_expand)(struct sock *sk);
	char name[TCP_CA_NAME_MAX];
	__u32 flags;
	void (*init)(struct sock *sk);
	void (*release)(struct sock *sk);
};

#pragma clang attribute pop

/* Casts of include/linux/tcp.h and include/net/inet_connection_sock.h. */
static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static __always_inline __u8 tcplab_ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
}

/* include/net/tcp.h inlines. */
static __always_inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* include/net/tcp.h, 6.18 (cwnd-limited first, then the slow-start rule). */
static __always_inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return true;
	/* In slow start, grow until cwnd is twice what was in flight. */
	if (tcp_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

static __always_inline __u32 tcp_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

static __always_inline __u32 tcp_min_rtt(const struct tcp_sock *tp)
{
	return tp->rtt_min.s[0].v;
}

static __always_inline bool before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

/* tcp_jiffies32: the kernel's jiffies through the bpf_jiffies64 helper (in the
 * simulator: its clock at the simulated HZ). */
#define tcp_jiffies32 ((__u32)bpf_jiffies64())

/* include/linux/jiffies.h: msecs_to_jiffies and usecs_to_jiffies round up
 * (for HZ = 100, 250 and 1000 exactly the kernel's _msecs_to_jiffies). */
static __always_inline __u32 msecs_to_jiffies(__u32 m)
{
	return ((__u64)m * HZ + MSEC_PER_SEC - 1) / MSEC_PER_SEC;
}

static __always_inline __u32 usecs_to_jiffies(__u32 u)
{
	return ((__u64)u * HZ + USEC_PER_SEC - 1) / USEC_PER_SEC;
}

/* The kfuncs of net/ipv4/bpf_tcp_ca.c (bpf_tcp_ca_check_kfunc_ids). */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* BPF_STRUCT_OPS(name, args...): one callback, its args read from the ctx array. */
#define BPF_STRUCT_OPS(name, args...) SEC("struct_ops/" #name) BPF_PROG(name, ##args)

#endif /* TCPLAB_CC_H */
