//! The simulator's own layout of the kernel structures a congestion control may touch:
//! which struct has which field, where it lives in our byte images, how wide it is and
//! whether a program may write it. CO-RE relocations (core.rs) resolve a program's
//! "struct tcp_sock, field snd_cwnd" against these tables, by name, exactly as libbpf
//! resolves them against vmlinux BTF.
//!
//! One image per flow holds the whole socket (`struct tcp_sock`, which begins with
//! `inet_connection_sock`, `inet_sock`, `sock` and `sock_common`, each at offset 0 as in
//! the kernel). `rate_sample` and `ack_sample` have images of their own.
//!
//! Field widths and signedness are the kernel's (6.18 vmlinux BTF), so a program
//! compiled once loads unchanged here and in the kernel. Writes are allowed exactly on
//! the fields `bpf_tcp_ca_btf_struct_access` (net/ipv4/bpf_tcp_ca.c) allows.
//!
//! Deviations: bitfields (`icsk_ca_state:5`, `is_cwnd_limited:1`) each get a byte of
//! their own at bit 0; programs read them with BPF_CORE_READ_BITFIELD, whose shifts
//! CO-RE computes from this layout, so the program cannot tell.

/// The fields a program may write, for error messages (the `writable` flags below).
pub const WRITABLE_FIELDS: &str = "sock.sk_pacing_rate, sock.sk_pacing_status, \
    inet_connection_sock.icsk_ca_priv, inet_connection_sock.icsk_ack.pending, \
    tcp_sock.snd_cwnd, tcp_sock.snd_cwnd_cnt, tcp_sock.snd_cwnd_stamp, \
    tcp_sock.snd_ssthresh, tcp_sock.ecn_flags, tcp_sock.app_limited";

/// What a field is, for matching against the program's local type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int {
        signed: bool,
    },
    Struct(&'static TStruct),
    Array {
        elem: &'static Kind,
        elem_size: u32,
        n: u32,
    },
}

#[derive(Debug, PartialEq, Eq)]
pub struct TField {
    pub name: &'static str,
    pub offset: u32,
    pub size: u32,
    /// Bit size of a bitfield (stored at bit 0 of its byte); 0 for a plain field.
    pub bits: u32,
    pub kind: Kind,
    pub writable: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub struct TStruct {
    pub name: &'static str,
    pub size: u32,
    pub fields: &'static [TField],
}

impl TStruct {
    pub fn field(&self, name: &str) -> Option<&'static TField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

const fn int(name: &'static str, offset: u32, size: u32, writable: bool) -> TField {
    TField {
        name,
        offset,
        size,
        bits: 0,
        kind: Kind::Int { signed: false },
        writable,
    }
}
const fn sint(name: &'static str, offset: u32, size: u32) -> TField {
    TField {
        name,
        offset,
        size,
        bits: 0,
        kind: Kind::Int { signed: true },
        writable: false,
    }
}
const fn bitfield(name: &'static str, offset: u32, bits: u32) -> TField {
    TField {
        name,
        offset,
        size: 1,
        bits,
        kind: Kind::Int { signed: false },
        writable: false,
    }
}
const fn nested(name: &'static str, offset: u32, s: &'static TStruct) -> TField {
    TField {
        name,
        offset,
        size: s.size,
        bits: 0,
        kind: Kind::Struct(s),
        writable: false,
    }
}

const U32: Kind = Kind::Int { signed: false };
const U64: Kind = Kind::Int { signed: false };

// Offsets inside the socket image.
pub const SK_PACING_STATUS: usize = 8;
pub const SK_PACING_RATE: usize = 16;
pub const SK_MAX_PACING_RATE: usize = 24;
pub const SK_PACING_SHIFT: usize = 32;
pub const ICSK_CA_STATE: usize = 40;
pub const ICSK_ACK_PENDING: usize = 41;
pub const ICSK_CA_PRIV: usize = 48;
/// `ICSK_CA_PRIV_SIZE` on 6.18: 13 u64.
pub const ICSK_CA_PRIV_SIZE: usize = 104;
pub const MSS_CACHE: usize = 152;
pub const SND_CWND: usize = 156;
pub const SND_SSTHRESH: usize = 160;
pub const SND_CWND_CNT: usize = 164;
pub const SND_CWND_CLAMP: usize = 168;
pub const SND_CWND_STAMP: usize = 172;
pub const LSNDTIME: usize = 176;
pub const PRIOR_CWND: usize = 180;
pub const PRIOR_SSTHRESH: usize = 184;
pub const PACKETS_OUT: usize = 188;
pub const SACKED_OUT: usize = 192;
pub const LOST_OUT: usize = 196;
pub const RETRANS_OUT: usize = 200;
pub const MAX_PACKETS_OUT: usize = 204;
pub const SND_UNA: usize = 208;
pub const SND_NXT: usize = 212;
pub const DELIVERED: usize = 216;
pub const DELIVERED_CE: usize = 220;
pub const LOST: usize = 224;
pub const APP_LIMITED: usize = 228;
pub const SRTT_US: usize = 232;
pub const IS_CWND_LIMITED: usize = 236;
pub const ECN_FLAGS: usize = 237;
pub const RTT_MIN: usize = 240;
pub const TCP_MSTAMP: usize = 264;
pub const TCP_WSTAMP_NS: usize = 272;
pub const RCV_NXT: usize = 280;
pub const TCP_CLOCK_CACHE: usize = 288;
pub const DELIVERED_MSTAMP: usize = 296;
pub const HIGH_SEQ: usize = 304;
pub const PRR_DELIVERED: usize = 308;
pub const PRR_OUT: usize = 312;
pub const REORDERING: usize = 316;
/// Size of the socket image.
pub const SOCK_SIZE: usize = 320;

pub static SOCK_COMMON: TStruct = TStruct {
    name: "sock_common",
    size: 8,
    fields: &[int("skc_family", 0, 2, false)],
};

pub static SOCK: TStruct = TStruct {
    name: "sock",
    size: 40,
    fields: &[
        nested("__sk_common", 0, &SOCK_COMMON),
        int("sk_pacing_status", SK_PACING_STATUS as u32, 4, true),
        int("sk_pacing_rate", SK_PACING_RATE as u32, 8, true),
        int("sk_max_pacing_rate", SK_MAX_PACING_RATE as u32, 8, false),
        int("sk_pacing_shift", SK_PACING_SHIFT as u32, 1, false),
    ],
};

pub static INET_SOCK: TStruct = TStruct {
    name: "inet_sock",
    size: 40,
    fields: &[nested("sk", 0, &SOCK)],
};

/// The anonymous `icsk_ack` struct of inet_connection_sock.
pub static ICSK_ACK: TStruct = TStruct {
    name: "",
    size: 1,
    fields: &[int("pending", 0, 1, true)],
};

pub static INET_CONNECTION_SOCK: TStruct = TStruct {
    name: "inet_connection_sock",
    size: 152,
    fields: &[
        nested("icsk_inet", 0, &INET_SOCK),
        bitfield("icsk_ca_state", ICSK_CA_STATE as u32, 5),
        nested("icsk_ack", ICSK_ACK_PENDING as u32, &ICSK_ACK),
        TField {
            name: "icsk_ca_priv",
            offset: ICSK_CA_PRIV as u32,
            size: ICSK_CA_PRIV_SIZE as u32,
            bits: 0,
            kind: Kind::Array {
                elem: &U64,
                elem_size: 8,
                n: 13,
            },
            writable: true,
        },
    ],
};

pub static MINMAX_SAMPLE: TStruct = TStruct {
    name: "minmax_sample",
    size: 8,
    fields: &[int("t", 0, 4, false), int("v", 4, 4, false)],
};

static MINMAX_SAMPLE_KIND: Kind = Kind::Struct(&MINMAX_SAMPLE);

pub static MINMAX: TStruct = TStruct {
    name: "minmax",
    size: 24,
    fields: &[TField {
        name: "s",
        offset: 0,
        size: 24,
        bits: 0,
        kind: Kind::Array {
            elem: &MINMAX_SAMPLE_KIND,
            elem_size: 8,
            n: 3,
        },
        writable: false,
    }],
};

pub static TCP_SOCK: TStruct = TStruct {
    name: "tcp_sock",
    size: SOCK_SIZE as u32,
    fields: &[
        nested("inet_conn", 0, &INET_CONNECTION_SOCK),
        int("mss_cache", MSS_CACHE as u32, 4, false),
        int("snd_cwnd", SND_CWND as u32, 4, true),
        int("snd_ssthresh", SND_SSTHRESH as u32, 4, true),
        int("snd_cwnd_cnt", SND_CWND_CNT as u32, 4, true),
        int("snd_cwnd_clamp", SND_CWND_CLAMP as u32, 4, false),
        int("snd_cwnd_stamp", SND_CWND_STAMP as u32, 4, true),
        int("lsndtime", LSNDTIME as u32, 4, false),
        int("prior_cwnd", PRIOR_CWND as u32, 4, false),
        int("prior_ssthresh", PRIOR_SSTHRESH as u32, 4, false),
        int("packets_out", PACKETS_OUT as u32, 4, false),
        int("sacked_out", SACKED_OUT as u32, 4, false),
        int("lost_out", LOST_OUT as u32, 4, false),
        int("retrans_out", RETRANS_OUT as u32, 4, false),
        int("max_packets_out", MAX_PACKETS_OUT as u32, 4, false),
        int("snd_una", SND_UNA as u32, 4, false),
        int("snd_nxt", SND_NXT as u32, 4, false),
        int("delivered", DELIVERED as u32, 4, false),
        int("delivered_ce", DELIVERED_CE as u32, 4, false),
        int("lost", LOST as u32, 4, false),
        int("app_limited", APP_LIMITED as u32, 4, true),
        int("srtt_us", SRTT_US as u32, 4, false),
        bitfield("is_cwnd_limited", IS_CWND_LIMITED as u32, 1),
        TField {
            name: "ecn_flags",
            offset: ECN_FLAGS as u32,
            size: 1,
            bits: 0,
            kind: U32,
            writable: true,
        },
        nested("rtt_min", RTT_MIN as u32, &MINMAX),
        int("tcp_mstamp", TCP_MSTAMP as u32, 8, false),
        int("tcp_wstamp_ns", TCP_WSTAMP_NS as u32, 8, false),
        int("rcv_nxt", RCV_NXT as u32, 4, false),
        int("tcp_clock_cache", TCP_CLOCK_CACHE as u32, 8, false),
        int("delivered_mstamp", DELIVERED_MSTAMP as u32, 8, false),
        int("high_seq", HIGH_SEQ as u32, 4, false),
        int("prr_delivered", PRR_DELIVERED as u32, 4, false),
        int("prr_out", PRR_OUT as u32, 4, false),
        int("reordering", REORDERING as u32, 4, false),
    ],
};

// Offsets inside the rate_sample image.
pub const RS_PRIOR_MSTAMP: usize = 0;
pub const RS_PRIOR_DELIVERED: usize = 8;
pub const RS_PRIOR_DELIVERED_CE: usize = 12;
pub const RS_DELIVERED: usize = 16;
pub const RS_DELIVERED_CE: usize = 20;
pub const RS_INTERVAL_US: usize = 24;
pub const RS_SND_INTERVAL_US: usize = 32;
pub const RS_RCV_INTERVAL_US: usize = 36;
pub const RS_RTT_US: usize = 40;
pub const RS_LOSSES: usize = 48;
pub const RS_ACKED_SACKED: usize = 52;
pub const RS_PRIOR_IN_FLIGHT: usize = 56;
pub const RS_IS_APP_LIMITED: usize = 60;
pub const RS_IS_RETRANS: usize = 61;
pub const RS_IS_ACK_DELAYED: usize = 62;
pub const RATE_SAMPLE_SIZE: usize = 64;

pub static RATE_SAMPLE: TStruct = TStruct {
    name: "rate_sample",
    size: RATE_SAMPLE_SIZE as u32,
    fields: &[
        int("prior_mstamp", RS_PRIOR_MSTAMP as u32, 8, false),
        int("prior_delivered", RS_PRIOR_DELIVERED as u32, 4, false),
        int("prior_delivered_ce", RS_PRIOR_DELIVERED_CE as u32, 4, false),
        sint("delivered", RS_DELIVERED as u32, 4),
        sint("delivered_ce", RS_DELIVERED_CE as u32, 4),
        sint("interval_us", RS_INTERVAL_US as u32, 8),
        int("snd_interval_us", RS_SND_INTERVAL_US as u32, 4, false),
        int("rcv_interval_us", RS_RCV_INTERVAL_US as u32, 4, false),
        sint("rtt_us", RS_RTT_US as u32, 8),
        sint("losses", RS_LOSSES as u32, 4),
        int("acked_sacked", RS_ACKED_SACKED as u32, 4, false),
        int("prior_in_flight", RS_PRIOR_IN_FLIGHT as u32, 4, false),
        int("is_app_limited", RS_IS_APP_LIMITED as u32, 1, false),
        int("is_retrans", RS_IS_RETRANS as u32, 1, false),
        int("is_ack_delayed", RS_IS_ACK_DELAYED as u32, 1, false),
    ],
};

pub const AS_PKTS_ACKED: usize = 0;
pub const AS_RTT_US: usize = 4;
pub const AS_IN_FLIGHT: usize = 8;
pub const ACK_SAMPLE_SIZE: usize = 12;

pub static ACK_SAMPLE: TStruct = TStruct {
    name: "ack_sample",
    size: ACK_SAMPLE_SIZE as u32,
    fields: &[
        int("pkts_acked", AS_PKTS_ACKED as u32, 4, false),
        sint("rtt_us", AS_RTT_US as u32, 4),
        int("in_flight", AS_IN_FLIGHT as u32, 4, false),
    ],
};

/// The structs a CO-RE relocation may name as its root.
pub static ROOTS: &[&TStruct] = &[
    &SOCK_COMMON,
    &SOCK,
    &INET_SOCK,
    &INET_CONNECTION_SOCK,
    &TCP_SOCK,
    &MINMAX,
    &MINMAX_SAMPLE,
    &RATE_SAMPLE,
    &ACK_SAMPLE,
];

pub fn root(name: &str) -> Option<&'static TStruct> {
    ROOTS.iter().copied().find(|s| s.name == name)
}

/// Per byte of the socket image: may a program write it? Built from the tables so the
/// two never disagree; nested structs are walked (icsk_ack.pending, sk_pacing_*).
pub fn sock_writable_mask() -> [bool; SOCK_SIZE] {
    fn walk(s: &TStruct, base: u32, mask: &mut [bool; SOCK_SIZE]) {
        for f in s.fields {
            let start = (base + f.offset) as usize;
            match f.kind {
                Kind::Struct(inner) => walk(inner, base + f.offset, mask),
                _ if f.writable => {
                    for b in mask.iter_mut().skip(start).take(f.size as usize) {
                        *b = true;
                    }
                }
                _ => {}
            }
        }
    }
    let mut mask = [false; SOCK_SIZE];
    walk(&TCP_SOCK, 0, &mut mask);
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_fit_and_do_not_overlap() {
        for s in ROOTS {
            let mut used = vec![false; s.size as usize];
            for f in s.fields {
                if matches!(f.kind, Kind::Struct(_)) && f.offset == 0 {
                    continue; // the embedded base struct, whose fields are listed there
                }
                for b in f.offset..f.offset + f.size {
                    assert!(
                        !used[b as usize],
                        "{}.{} overlaps at byte {b}",
                        s.name, f.name
                    );
                    used[b as usize] = true;
                }
            }
        }
    }

    #[test]
    fn writable_bytes_are_the_kernels_list() {
        let mask = sock_writable_mask();
        let n = mask.iter().filter(|&&w| w).count();
        // pacing_status 4 + pacing_rate 8 + icsk_ack.pending 1 + ca_priv 104 + cwnd 4
        // + ssthresh 4 + cwnd_cnt 4 + cwnd_stamp 4 + app_limited 4 + ecn_flags 1
        assert_eq!(n, 4 + 8 + 1 + 104 + 4 + 4 + 4 + 4 + 4 + 1);
        assert!(mask[SND_CWND] && !mask[SND_UNA] && !mask[SK_MAX_PACING_RATE]);
    }
}
