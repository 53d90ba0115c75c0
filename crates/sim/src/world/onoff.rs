//! On/off TCP flows (`FlowConfig::onoff`): the application writes during on periods and
//! stops writing during off periods (onoff.rs draws their lengths from the RNG stream
//! `onoff/flow<i>`), from the flow's start to its stop. Off: the sender stops offering
//! new data (`Sender::pause`, what was sent is still retransmitted); on: it offers data
//! again and sends with the cwnd it has (`Sender::resume`).
//!
//! Deviations: Linux restarts an idle connection's cwnd (`tcp_cwnd_restart`, RFC 2861:
//! after an idle time longer than the RTO, cwnd halves per RTO idle, down to the restart
//! window) when `tcp_slow_start_after_idle` = 1, its default; the engine does not model
//! it (tcp/mod.rs deviations), so a flow resumes with its pre-idle cwnd, as Linux with
//! `net.ipv4.tcp_slow_start_after_idle = 0`. Pacing (BBR, or the pacing timer) and the
//! algorithm's own `CA_EVENT_TX_START` handling (CUBIC resets its epoch) still apply.

use super::{Event, World};
use crate::config::WorldConfig;
use crate::onoff::Periods;
use crate::rng::RunRng;
use crate::sched::EventQueue;
use crate::time::SimTime;

/// Each flow's periods, and the first off event of each on/off flow.
pub(super) fn build(
    cfg: &WorldConfig,
    rng: &RunRng,
    queue: &mut EventQueue<Event>,
) -> Vec<Option<Periods>> {
    if cfg.flows.iter().all(|f| f.onoff.is_none()) {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(cfg.flows.len());
    for (i, f) in cfg.flows.iter().enumerate() {
        let Some(o) = f.onoff else {
            out.push(None);
            continue;
        };
        let mut p = Periods::new(o, rng.stream(&format!("onoff/flow{i}")));
        let off_at = f.start_ns.saturating_add(p.on());
        if off_at < f.stop_ns.unwrap_or(cfg.duration_ns).min(cfg.duration_ns) {
            queue.push(
                SimTime(off_at),
                Event::FlowOnOff {
                    flow: i as u32,
                    on: false,
                },
            );
        }
        out.push(Some(p));
    }
    out
}

impl World {
    #[cold]
    #[inline(never)]
    pub(super) fn flow_onoff(&mut self, flow: u32, on: bool) {
        let now = self.now;
        let f = flow as usize;
        let mut io = std::mem::take(&mut self.io);
        let s = &mut self.flows[f].sender;
        if on {
            s.resume(now, &mut io);
        } else {
            s.pause(now, &mut io);
        }
        self.flush_sender(flow, io);
        let p = self.onoff[f].as_mut().expect("an on/off flow has periods");
        let next = now.ns().saturating_add(if on { p.on() } else { p.off() });
        if next < self.flows[f].stop.ns().min(self.end.ns()) {
            self.queue
                .push(SimTime(next), Event::FlowOnOff { flow, on: !on });
        }
    }
}
