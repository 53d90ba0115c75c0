// SPDX-License-Identifier: GPL-2.0
/*
 * kfuncs.bpf.c: congestion controls built from the kfuncs the kernel exports from its
 * own CUBIC and BBR (tcp_cubic.c, tcp_bbr.c BTF_KFUNCS sets): `kf_cubic` forwards
 * every callback to cubictcp_*, so it must behave as CUBIC; `kf_bbr` forwards to bbr_*
 * (cong_control to bbr_main); its undo_cwnd returns bbr_sndbuf_expand +
 * 10 * bbr_min_tso_segs, so tests/kfuncs.rs can check both.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

extern void cubictcp_init(struct sock *sk) __ksym;
extern __u32 cubictcp_recalc_ssthresh(struct sock *sk) __ksym;
extern void cubictcp_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern void cubictcp_state(struct sock *sk, __u8 new_state) __ksym;
extern void cubictcp_cwnd_event(struct sock *sk, enum tcp_ca_event event) __ksym;
extern void cubictcp_acked(struct sock *sk, const struct ack_sample *sample) __ksym;

extern void bbr_init(struct sock *sk) __ksym;
extern void bbr_main(struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs) __ksym;
extern __u32 bbr_sndbuf_expand(struct sock *sk) __ksym;
extern __u32 bbr_ssthresh(struct sock *sk) __ksym;
extern __u32 bbr_min_tso_segs(struct sock *sk) __ksym;

SEC("struct_ops")
void BPF_PROG(kc_init, struct sock *sk)
{
	cubictcp_init(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(kc_ssthresh, struct sock *sk)
{
	return cubictcp_recalc_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(kc_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	cubictcp_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
void BPF_PROG(kc_set_state, struct sock *sk, __u8 new_state)
{
	cubictcp_state(sk, new_state);
}

SEC("struct_ops")
void BPF_PROG(kc_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	cubictcp_cwnd_event(sk, event);
}

SEC("struct_ops")
void BPF_PROG(kc_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	cubictcp_acked(sk, sample);
}

SEC("struct_ops")
__u32 BPF_PROG(k_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(kb_init, struct sock *sk)
{
	bbr_init(sk);
}

SEC("struct_ops")
void BPF_PROG(kb_main, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	bbr_main(sk, ack, flag, rs);
}

SEC("struct_ops")
__u32 BPF_PROG(kb_ssthresh, struct sock *sk)
{
	return bbr_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(kb_undo_cwnd, struct sock *sk)
{
	return bbr_sndbuf_expand(sk) + 10 * bbr_min_tso_segs(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops kf_cubic = {
	.init = (void *)kc_init,
	.ssthresh = (void *)kc_ssthresh,
	.cong_avoid = (void *)kc_cong_avoid,
	.set_state = (void *)kc_set_state,
	.cwnd_event = (void *)kc_cwnd_event,
	.pkts_acked = (void *)kc_pkts_acked,
	.undo_cwnd = (void *)k_undo_cwnd,
	.name = "kf_cubic",
};

SEC(".struct_ops")
struct tcp_congestion_ops kf_bbr = {
	.init = (void *)kb_init,
	.cong_control = (void *)kb_main,
	.ssthresh = (void *)kb_ssthresh,
	.undo_cwnd = (void *)kb_undo_cwnd,
	.name = "kf_bbr",
};
