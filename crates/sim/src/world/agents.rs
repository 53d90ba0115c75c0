//! The interval agents of a world (`agents` in the config; crates/sim/src/interval.rs):
//! each drives one flow (`external`, or the algorithm whose window its policy
//! overrides), called at the times it asks for with the flow's statistics since its
//! previous call. [`World::run_until`] stops at those times: the
//! events before one run, then the writes that waited for a connection are applied, then
//! the agents due step, read and write (the loop the training environment runs through
//! the stepping API, run in Rust). The engine knows no agent: the
//! [`ControllerFactory`] builds each from its config entry's opaque `policy`.

use super::World;
use crate::config::{ConfigError, WorldConfig};
use crate::contract::ControllerFactory;
use crate::interval::{AgentStep, AgentWrite, FlowState, IntervalAgent};
use crate::time::SimTime;

/// One agent driving one flow.
pub(crate) struct Slot {
    flow: usize,
    agent: Box<dyn IntervalAgent>,
    /// When it is called next.
    next: SimTime,
    /// The flow's state at the previous call, and when that was.
    mark: (FlowState, SimTime),
    /// A write that waits for the flow's connection.
    pending: Option<AgentWrite>,
}

impl Slot {
    /// The flow's algorithm as reported.
    pub(crate) fn name(&self) -> String {
        self.agent.name()
    }
}

/// The config's agents as `cc` builds them, checked: each indexes a distinct flow that
/// runs the agent's underlay (`external`, or Orca's `cubic`); errors name `agents[i].…`.
pub(crate) fn build(
    cfg: &WorldConfig,
    cc: &dyn ControllerFactory,
) -> Result<Vec<Slot>, ConfigError> {
    let mut slots: Vec<Slot> = Vec::with_capacity(cfg.agents.len());
    for (i, a) in cfg.agents.iter().enumerate() {
        let agent = cc
            .agent(&a.policy, cfg.duration_ns)
            .map_err(|e| ConfigError {
                field: format!("agents[{i}].{}", e.field),
                message: e.message,
            })?;
        let underlay = agent.underlay();
        if a.flow >= cfg.flows.len() || cfg.flows[a.flow].cc != underlay {
            return Err(ConfigError {
                field: format!("agents[{i}].flow"),
                message: format!(
                    "must index a flow with cc = \"{underlay}\" (what the policy drives); flow {} is {}",
                    a.flow,
                    cfg.flows
                        .get(a.flow)
                        .map(|f| f.cc.as_str())
                        .unwrap_or("absent")
                ),
            });
        }
        if slots.iter().any(|s| s.flow == a.flow) {
            return Err(ConfigError {
                field: format!("agents[{i}].flow"),
                message: format!("flow {} already has an agent", a.flow),
            });
        }
        slots.push(Slot {
            flow: a.flow,
            agent,
            next: SimTime::ZERO,
            mark: (FlowState::default(), SimTime::ZERO),
            pending: None,
        });
    }
    Ok(slots)
}

impl World {
    /// Each agent's start (at time 0, before any connection): its write waits.
    pub(crate) fn start_agents(&mut self) {
        let now = self.now;
        for slot in &mut self.agents {
            let AgentStep { write, next_ns } = slot.agent.start(now.ns());
            slot.pending = write;
            slot.next = SimTime(next_ns);
        }
    }

    /// When the next agent is called (the end if none will be).
    pub(crate) fn next_agent_time(&self) -> SimTime {
        self.agents
            .iter()
            .map(|a| a.next)
            .min()
            .unwrap_or(self.end)
            .min(self.end)
    }

    /// After the events before now: apply the writes whose flow has connected (in flow
    /// order), then call every agent due now, before the end (at the end nothing more is
    /// written).
    pub(crate) fn step_agents(&mut self) {
        for k in 0..self.agents.len() {
            let slot = &self.agents[self.agents_by_flow[k]];
            if slot.pending.is_some() && self.flow_started(slot.flow) {
                let (flow, w) = (slot.flow, slot.pending);
                self.agents[self.agents_by_flow[k]].pending = None;
                self.write_agent(flow, w);
            }
        }
        let now = self.now;
        if now >= self.end {
            return;
        }
        for k in 0..self.agents.len() {
            if self.agents[k].next > now {
                continue;
            }
            let (flow, (prev, since)) = (self.agents[k].flow, self.agents[k].mark);
            let (iv, state) = self.interval_since(flow, &prev, since);
            self.agents[k].mark = (state, now);
            let AgentStep { write, next_ns } = self.agents[k].agent.step(now.ns(), &iv, &state);
            self.agents[k].next = SimTime(next_ns.max(now.ns() + 1));
            if write.is_some() {
                if self.flow_started(flow) {
                    self.write_agent(flow, write);
                } else {
                    self.agents[k].pending = write;
                }
            }
        }
    }

    /// An agent's write: the pacing rate (if it writes one), then cwnd (as two writes,
    /// the order the stepping API's `set_pacing_rate` then `set_cwnd` apply them).
    fn write_agent(&mut self, flow: usize, w: Option<AgentWrite>) {
        if let Some(w) = w {
            if let Some(rate_bps) = w.rate_bps {
                self.apply_write(flow, None, Some((rate_bps / 8.0) as u64), None);
            }
            self.apply_write(flow, None, None, Some(w.cwnd));
        }
    }
}
