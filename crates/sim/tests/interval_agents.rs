//! The interval-agent seam (interval.rs, world/agents.rs) with an agent that knows no
//! preset: the engine calls it at exactly the times it asks for with the statistics of
//! the interval since its previous call, applies its writes as the stepping API does
//! (a run driven by the agent equals the same writes made through a `Stepper` at the same
//! times), reports the flow by the agent's name, and names the entry of a bad agent.

mod common;
use common::*;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tcplab_cc::ops::CongestionOps;
use tcplab_sim::time::SimTime;
use tcplab_sim::world::stepping::Stepper;
use tcplab_sim::{
    AgentConfig, AgentStep, AgentWrite, CcChoice, ConfigError, ControllerFactory, FlowState,
    IntervalAgent, IntervalStats, NativeCc, World, WorldConfig,
};

/// Every 10 ms a window of 10 + k segments (k the call's number), unpaced; it records
/// when it was called and each interval's length.
struct Ramp {
    calls: Arc<Mutex<Vec<(u64, u64)>>>,
    k: u32,
}

const STEP: u64 = 10 * MS;

impl IntervalAgent for Ramp {
    fn name(&self) -> String {
        "ramp".into()
    }
    fn start(&mut self, now_ns: u64) -> AgentStep {
        AgentStep {
            write: Some(AgentWrite {
                rate_bps: Some(0.0),
                cwnd: 10,
            }),
            next_ns: now_ns + STEP,
        }
    }
    fn step(&mut self, now_ns: u64, iv: &IntervalStats, _st: &FlowState) -> AgentStep {
        self.calls.lock().unwrap().push((now_ns, iv.duration_us));
        self.k += 1;
        AgentStep {
            write: Some(AgentWrite {
                rate_bps: Some(0.0),
                cwnd: 10 + self.k,
            }),
            next_ns: now_ns + STEP,
        }
    }
}

struct Factory(Arc<Mutex<Vec<(u64, u64)>>>);

impl ControllerFactory for Factory {
    fn build(
        &self,
        choice: &CcChoice<'_>,
        seed: u64,
    ) -> Result<Box<dyn CongestionOps>, ConfigError> {
        NativeCc.build(choice, seed)
    }
    fn agent(
        &self,
        _policy: &serde_json::Value,
        _duration_ns: u64,
    ) -> Result<Box<dyn IntervalAgent>, ConfigError> {
        Ok(Box::new(Ramp {
            calls: self.0.clone(),
            k: 0,
        }))
    }
}

/// One external flow (100 Mbit/s, 40 ms) beside a CUBIC one, 1 s; the agent drives flow 0.
fn cfg() -> WorldConfig {
    let mut cfg = dumbbell("external", 2, 100_000_000, 40 * MS, 1.0, S);
    cfg.flows[0].params = BTreeMap::new();
    cfg.flows[1].cc = "cubic".into();
    cfg.flows[1].params = BTreeMap::new();
    cfg.agents = vec![AgentConfig {
        flow: 0,
        policy: serde_json::json!({}),
    }];
    cfg
}

#[test]
fn the_agent_is_called_at_its_times_and_its_run_equals_the_same_writes_stepped() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let out = World::run_config(&cfg(), &Factory(calls.clone())).unwrap();
    // Called at 10, 20, ..., 990 ms (not at the end, 1 s), each interval 10 000 us.
    let calls = calls.lock().unwrap().clone();
    let want: Vec<(u64, u64)> = (1..100).map(|k| (k * STEP, 10_000)).collect();
    assert_eq!(calls, want);
    assert_eq!(out.flows[0].cc, "ramp");

    // The same writes through the stepping API at the same times, on a world without
    // the agent: the write at 0 waits for the connection, as the agent's does.
    let mut plain = cfg();
    plain.agents.clear();
    let mut s = Stepper::new(World::new(&plain, &NativeCc).unwrap());
    s.set_pacing_rate(0, 0.0).unwrap();
    s.set_cwnd(0, 10).unwrap();
    for k in 1..100u32 {
        s.advance_to(SimTime(k as u64 * STEP));
        s.take_interval(0).unwrap();
        s.set_pacing_rate(0, 0.0).unwrap();
        s.set_cwnd(0, 10 + k).unwrap();
    }
    let mut stepped = s.finish().unwrap();
    stepped.flows[0].cc = "ramp".into();
    assert_eq!(
        serde_json::to_string(&out).unwrap(),
        serde_json::to_string(&stepped).unwrap()
    );
}

#[test]
fn a_bad_agent_entry_is_named() {
    // The engine's own factory builds no agents: the entry's policy is named.
    let e = cfg().validate(&NativeCc).unwrap_err();
    assert_eq!(e.field, "agents[0].policy");
    // An agent on a flow that does not run external.
    let mut c = cfg();
    c.agents[0].flow = 1;
    let e = c.validate(&Factory(Default::default())).unwrap_err();
    assert_eq!(e.field, "agents[0].flow");
    assert!(e.message.contains("cubic"), "{}", e.message);
    // Two agents on one flow.
    let mut c = cfg();
    c.agents.push(c.agents[0].clone());
    let e = c.validate(&Factory(Default::default())).unwrap_err();
    assert_eq!(e.field, "agents[1].flow");
}
