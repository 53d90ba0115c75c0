//! Research variants of BBRv1 from the tcplab source papers. Each module holds one
//! paper's decision rule as small pure pieces with hand-computed tests; the BBR kernel
//! port (`crate::bbr`) runs them through its variant hooks. `docs/variants.md` gives the
//! rules, constants, ambiguities and test arithmetic side by side.
//!
//! - [`acd`]: BBR-ACD, congestion detection before halving cwnd on loss (seed 000).
//! - [`acd_ns3`]: BBR-ACD and its baseline as the authors' ns-3 code runs them (profile).
//! - [`cws`]: BBR-CWS, upper_scaling_factor on the cwnd cap (seed 002, Algorithm 1).
//! - [`acw`]: BBR-ACW, per-flow cwnd_gain from Eqs. 1-2 (seed 001, Algorithm 1).
//! - [`modest`]: Modest BBR, BIC-like binary search on retransmission (seed 002, Alg. 2).
//! - [`bbq`]: BBQ, probe time capped while a queue persists (Ma et al. 2017).
//! - [`da_bbr`]: DA-BBR, RTT-dependent regulating factor on the cwnd cap (Kim, Cho 2020).

pub mod acd;
pub mod acd_ns3;
pub mod acw;
pub mod bbq;
pub mod cws;
pub mod da_bbr;
pub mod modest;
pub mod window;

#[cfg(test)]
pub(crate) mod testkit;
