//! tcplab congestion control: algorithms behind a seam that mirrors Linux
//! `struct tcp_congestion_ops`, free of any simulator dependency (sans-IO).
//!
//! - [`ops`]: the trait, the socket view and the per-ACK samples.
//! - [`helpers`]: kernel helpers (slow start, additive increase, Reno threshold).
//! - [`registry`]: algorithms by name, with parameter schemas.
//! - [`minmax`]: the kernel's windowed min/max filter (lib/win_minmax.c), used by BBR's
//!   bandwidth filter and by the simulator's `tcp_min_rtt`.
//! - [`bbr`]: BBR v1 (tcp_bbr.c), one module per concern, and the `BbrVariant` hooks
//!   the research variants build on.
//! - [`bic`]: BIC (tcp_bic.c), binary search between the last loss and the cut.
//! - [`highspeed`]: HighSpeed TCP (tcp_highspeed.c), RFC 3649's a(w)/b(w) table.
//! - [`htcp`]: H-TCP (tcp_htcp.c), increase by time since the last loss.
//! - [`scalable`]: Scalable TCP (tcp_scalable.c), MIMD.
//! - [`westwood`]: Westwood+ (tcp_westwood.c), cwnd = bandwidth estimate * RTTmin after loss.
//! - [`hybla`]: Hybla (tcp_hybla.c), increase scaled by RTT / 25 ms.
//! - [`veno`]: Veno (tcp_veno.c), Vegas's backlog tells random from congestive loss.
//! - [`yeah`]: YeAH (tcp_yeah.c), Scalable/Reno modes from Vegas's queue estimate.
//! - [`lp`]: TCP-LP (tcp_lp.c), low priority by early delay congestion (RTT for OWD).
//! - [`nv`]: TCP-NV (tcp_nv.c), Vegas's successor with a rate-based decrease.
//! - [`cdg`]: CDG (tcp_cdg.c), probabilistic backoff on a positive delay gradient.
//! - [`ledbat`]: LEDBAT (RFC 6817, ns-3 tcp-ledbat.cc), background transport at a
//!   100 ms queueing-delay target (RTT for OWD).
//! - [`copa`]: Copa's default mode (NSDI 2018, mvfst Copa.cpp), target rate
//!   1 / (delta * queueing delay), paced.
//! - [`vivace`]: PCC Vivace (NSDI 2018, PCC-Uspace), gradient ascent on a utility of
//!   rate, RTT slope and loss over monitor intervals, paced.
//! - [`dctcp`]: DCTCP (tcp_dctcp.c), the ECN-driven algorithm.
//! - [`bbr3`]: BBRv3 (google/bbr branch v3, tcp_bbr.c), one module per concern; also
//!   BBRv2 (`bbr3::v2`, branch v2alpha tcp_bbr2.c) where its code differs.
//! - [`external`]: cwnd and pacing rate written from outside (the stepping engine).
//! - [`variants`]: BBR-ACD, BBR-CWS, BBR-ACW, Modest BBR, BBQ, DA-BBR as `BbrVariant`s.

pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod cdg;
pub mod copa;
pub mod cubic;
pub mod dctcp;
pub mod external;
pub mod helpers;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod ledbat;
pub mod lp;
pub mod minmax;
pub mod nv;
pub mod ops;
pub mod registry;
pub mod reno;
pub mod scalable;
pub mod variants;
pub mod vegas;
pub mod veno;
pub mod vivace;
pub mod westwood;
pub mod yeah;

pub use ops::{
    AckSample, CaEvent, CaState, CcView, CongestionOps, InfoField, InfoValue, LostSkb, RateSample,
};
pub use registry::{AlgorithmSpec, CcError, ParamChoice, ParamKind, ParamSpec, ParamValue, Params};

/// docs/WRITING_ALGORITHMS.md, whose Rust examples run as this crate's doc tests.
#[doc = include_str!("../../../docs/WRITING_ALGORITHMS.md")]
pub mod writing_algorithms {}
