//! Recording: exact counters at the end of a run and series sampled on a fixed interval,
//! stored by column.
//!
//! Definitions (docs/METRICS.md): throughput = data payload bytes reaching the receiver,
//! duplicates included; goodput = bytes delivered in order to the application, each
//! once; sending rate = data payload bytes the sender puts on its access link,
//! retransmissions included. Rates are over the interval that ends at the row's time.
//!
//! Recording only reads simulation state: samples are taken between events, outside the
//! event queue, so a run with and without series processes the same events in the same
//! order and yields the same counters.

use std::collections::BTreeMap;

use serde::Serialize;
use tcplab_cc::{InfoField, InfoValue};

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Column {
    U64(Vec<u64>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn as_f64(&self) -> Option<&[f64]> {
        match self {
            Column::F64(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<&[u64]> {
        match self {
            Column::U64(v) => Some(v),
            _ => None,
        }
    }
}

/// Named columns of equal length, in a fixed order. It crosses to Python (and JSON) as
/// one map from column name to values, in that order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Serialize for Table {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.columns.iter().map(|(n, c)| (n, c)))
    }
}

impl schemars::JsonSchema for Table {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Table".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Column name -> values, all columns of one length, in a fixed order.",
            "type": "object",
            "additionalProperties": g.subschema_for::<Column>(),
        })
    }
}

/// `captures` as one map from link name to its table, like a table's columns.
fn serialize_named_tables<S: serde::Serializer>(
    tables: &[(String, Table)],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(tables.iter().map(|(n, t)| (n, t)))
}

impl Table {
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}

/// Exact per-flow counters.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FlowCounters {
    pub cc: String,
    pub sent_packets: u64,
    /// Payload bytes sent, retransmissions included.
    pub sent_bytes: u64,
    pub retransmitted_packets: u64,
    /// Data segments that reached the receiver (duplicates included).
    pub received_packets: u64,
    /// Their payload bytes.
    pub received_bytes: u64,
    /// Payload bytes delivered in order to the application, each once (goodput).
    pub delivered_bytes: u64,
    pub duplicate_packets: u64,
    /// Data segments lost in the network (tail drops and random losses, all queues).
    pub dropped_packets: u64,
    /// Data segments still inside the network when the run ended.
    pub in_flight_packets_at_end: u64,
    pub rto_count: u64,
    pub recoveries: u64,
    /// Retransmissions the receiver reported as duplicates by D-SACK (`tp->dsack_dups`):
    /// spurious retransmissions (a reordered original arrived too).
    pub spurious_retransmissions: u64,
    /// Recoveries undone as spurious (D-SACK or Eifel timestamps, tcp::reorder); absent
    /// from kernel runs (tcp_info has no such counter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undos: Option<u64>,
    /// The sender's final `tp->reordering` (3 until reordering is seen) and reordering
    /// events (`tp->reord_seen`).
    pub reordering: u32,
    pub reord_seen: u64,
    /// Tail loss probes sent (new data or a retransmission).
    pub tlp_probes: u64,
    /// Nanoseconds new data waited for the receiver's window (`tcpi_rwnd_limited`);
    /// 0 with `tcp.receive_buffer = "unlimited"`.
    pub rwnd_limited_ns: u64,
    /// ECN: data segments that reached the receiver with CE, ACKs with ECE the sender
    /// processed, and CWR reductions they started (all 0 without ECN).
    pub ce_packets: u64,
    pub ece_acks: u64,
    pub ecn_reductions: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
    /// A finite transfer: when its last byte was delivered in order (None: not finished,
    /// or bulk). Flow completion time = completed_ns - start_ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_ns: Option<u64>,
}

/// Exact per-queue counters (packets; data and ACKs). enqueued = departed + dropped +
/// backlog; `random_loss` is the part of `dropped` that was random.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct QueueReport {
    pub name: String,
    pub enqueued: u64,
    pub departed: u64,
    pub dropped: u64,
    pub random_loss: u64,
    /// CE marks set by the queue discipline (0 for drop-tail).
    pub marked: u64,
    pub backlog_pkts: u64,
    pub backlog_bytes: u64,
}

/// One link direction as the engine built and ran it (net/network.rs `link_reports`), so
/// the analysis reads the capacity the run had rather than trusting the spec to match.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LinkReport {
    /// As the topology builder names it, like the queue reports: `bottleneck`,
    /// `bottleneck_reverse`, `flow3.receiver_access`, a named link and its `_reverse`, ...
    pub name: String,
    /// Line rate at the start of the run (bit/s); a traced link's is its trace's mean
    /// rate over one period (net/trace.rs `mean_rate_bps`).
    pub rate_bps: u64,
    /// One-way propagation delay at the start of the run (ns).
    pub delay_ns: u64,
    /// Random-loss probability at the start of the run.
    pub loss: f64,
    /// The trace (by its name) that serves the link in place of the line rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Changes of rate, delay or loss during the run (`[[events]]`, the bottleneck's only),
    /// in the order the engine applies them; an event at `duration_ns` is listed although
    /// the run ends at it.
    pub events: Vec<crate::contract::LinkEvent>,
}

/// Everything a run produces.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunOutput {
    pub flows: Vec<FlowCounters>,
    /// Constant-rate sources (source.rs), apart from the TCP flows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceCounters>,
    /// Latency probes (probe.rs): counters and each echo's round trip.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<crate::probe::ProbeReport>,
    pub queues: Vec<QueueReport>,
    /// Every link direction as built, in the order of `queues` (net/network.rs).
    pub links: Vec<LinkReport>,
    /// One row per (sample time, flow).
    pub series: Table,
    /// One row per sample time: the bottleneck queue.
    pub queue_series: Table,
    /// Data segments that finished crossing the bottleneck.
    pub bottleneck_packets: u64,
    /// Simulation events processed (samples excluded).
    pub events_processed: u64,
    pub duration_ns: u64,
    /// Per captured link (config `capture`), its departures (net/capture.rs).
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "serialize_named_tables"
    )]
    #[schemars(with = "std::collections::BTreeMap<String, Table>")]
    pub captures: Vec<(String, Table)>,
    /// Departures not captured because the capture limit was reached; `None` when no
    /// link is captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_missed: Option<u64>,
}

/// The values of one flow at a sample time, gathered by the world.
pub struct FlowSample {
    pub cwnd_pkts: u32,
    pub inflight_pkts: u32,
    pub pacing_rate_bps: f64,
    pub srtt_ms: f64,
    pub rtt_ms: f64,
    pub delivery_rate_bps: f64,
    /// Cumulative counters; the recorder differences them.
    pub received_bytes: u64,
    pub delivered_bytes: u64,
    pub sent_bytes: u64,
    pub retransmits: u64,
    pub ca_state: &'static str,
    pub info: Vec<(&'static str, InfoValue)>,
}

#[derive(Default, Clone, Copy)]
struct Last {
    received_bytes: u64,
    delivered_bytes: u64,
    sent_bytes: u64,
    retransmits: u64,
}

/// The type of a column, as `series_columns` announces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    U64,
    F64,
    Str,
}

impl ColumnKind {
    pub fn name(self) -> &'static str {
        match self {
            ColumnKind::U64 => "u64",
            ColumnKind::F64 => "f64",
            ColumnKind::Str => "str",
        }
    }
}

/// The series columns a run writes when its flows' algorithms report `info` (one list
/// per flow), in `Recorder::finish`'s order: the fixed columns, then the algorithms'
/// numeric `cc_*` columns and their label columns, each by name. Another backend (the
/// kernel's) writes exactly these, so both backends' series have one schema.
pub fn series_columns(infos: &[Vec<InfoField>]) -> Vec<(String, ColumnKind)> {
    let mut cols = vec![
        ("time_ns".to_string(), ColumnKind::U64),
        ("flow".to_string(), ColumnKind::U64),
    ];
    cols.extend(F64_NAMES.iter().map(|n| (n.to_string(), ColumnKind::F64)));
    cols.push(("retransmits".into(), ColumnKind::U64));
    cols.push(("ca_state".into(), ColumnKind::Str));
    let mut num = std::collections::BTreeSet::new();
    let mut label = std::collections::BTreeSet::new();
    for (name, v) in infos.iter().flatten() {
        match v {
            InfoValue::Num(_) => num.insert(*name),
            InfoValue::Label(_) => label.insert(*name),
        };
    }
    cols.extend(
        num.into_iter()
            .map(|n| (format!("cc_{n}"), ColumnKind::F64)),
    );
    cols.extend(
        label
            .into_iter()
            .map(|n| (format!("cc_{n}"), ColumnKind::Str)),
    );
    cols
}

/// Accumulates the sampled series.
pub struct Recorder {
    interval_ns: u64,
    last: Vec<Last>,
    last_time_ns: u64,
    last_bn_drops: u64,
    rows: usize,
    time_ns: Vec<u64>,
    flow: Vec<u64>,
    f64_cols: [Vec<f64>; 9],
    retransmits: Vec<u64>,
    ca_state: Vec<&'static str>,
    cc_num: BTreeMap<&'static str, Vec<f64>>,
    cc_label: BTreeMap<&'static str, Vec<&'static str>>,
    q_time: Vec<u64>,
    q_pkts: Vec<u64>,
    q_bytes: Vec<u64>,
    q_drops: Vec<u64>,
    /// With a queue discipline: marks per interval and mean sojourn (ms) of the packets
    /// dequeued in the interval (NaN if none).
    q_marks: Vec<u64>,
    q_sojourn_ms: Vec<f64>,
    last_aqm: (u64, u64, u64),
}

const F64_NAMES: [&str; 9] = [
    "cwnd_pkts",
    "inflight_pkts",
    "pacing_rate_bps",
    "srtt_ms",
    "rtt_ms",
    "delivery_rate_bps",
    "throughput_bps",
    "goodput_bps",
    "sending_rate_bps",
];

impl Recorder {
    pub fn new(interval_ns: u64, n_flows: usize) -> Recorder {
        Recorder {
            interval_ns,
            last: vec![Last::default(); n_flows],
            last_time_ns: 0,
            last_bn_drops: 0,
            rows: 0,
            time_ns: Vec::new(),
            flow: Vec::new(),
            f64_cols: Default::default(),
            retransmits: Vec::new(),
            ca_state: Vec::new(),
            cc_num: BTreeMap::new(),
            cc_label: BTreeMap::new(),
            q_time: Vec::new(),
            q_pkts: Vec::new(),
            q_bytes: Vec::new(),
            q_drops: Vec::new(),
            q_marks: Vec::new(),
            q_sojourn_ms: Vec::new(),
            last_aqm: (0, 0, 0),
        }
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// Record one flow's row at `time_ns`.
    pub fn flow_row(&mut self, time_ns: u64, flow: usize, s: FlowSample) {
        let dt_s = (time_ns - self.last_time_ns) as f64 / 1e9;
        let last = self.last[flow];
        let rate = |now: u64, before: u64| {
            if dt_s > 0.0 {
                (now - before) as f64 * 8.0 / dt_s
            } else {
                0.0
            }
        };
        let vals = [
            s.cwnd_pkts as f64,
            s.inflight_pkts as f64,
            s.pacing_rate_bps,
            s.srtt_ms,
            s.rtt_ms,
            s.delivery_rate_bps,
            rate(s.received_bytes, last.received_bytes),
            rate(s.delivered_bytes, last.delivered_bytes),
            rate(s.sent_bytes, last.sent_bytes),
        ];
        for (col, v) in self.f64_cols.iter_mut().zip(vals) {
            col.push(v);
        }
        self.time_ns.push(time_ns);
        self.flow.push(flow as u64);
        self.retransmits.push(s.retransmits - last.retransmits);
        self.ca_state.push(s.ca_state);
        self.last[flow] = Last {
            received_bytes: s.received_bytes,
            delivered_bytes: s.delivered_bytes,
            sent_bytes: s.sent_bytes,
            retransmits: s.retransmits,
        };
        let rows = self.rows;
        for (name, v) in s.info {
            match v {
                InfoValue::Num(x) => self
                    .cc_num
                    .entry(name)
                    .or_insert_with(|| vec![f64::NAN; rows])
                    .push(x),
                InfoValue::Label(l) => self
                    .cc_label
                    .entry(name)
                    .or_insert_with(|| vec![""; rows])
                    .push(l),
            }
        }
        self.rows += 1;
        // A flow lacking a column gets NaN / "".
        for col in self.cc_num.values_mut() {
            if col.len() < self.rows {
                col.push(f64::NAN);
            }
        }
        for col in self.cc_label.values_mut() {
            if col.len() < self.rows {
                col.push("");
            }
        }
    }

    /// Record the bottleneck queue and close the interval.
    pub fn queue_row(
        &mut self,
        time_ns: u64,
        backlog_pkts: u64,
        backlog_bytes: u64,
        dropped_total: u64,
    ) {
        self.q_time.push(time_ns);
        self.q_pkts.push(backlog_pkts);
        self.q_bytes.push(backlog_bytes);
        self.q_drops.push(dropped_total - self.last_bn_drops);
        self.last_bn_drops = dropped_total;
        self.last_time_ns = time_ns;
    }

    /// Record the queue discipline's cumulative marks and sojourn sum (ns) / count for
    /// the row `queue_row` just added.
    pub fn queue_aqm(&mut self, marked: u64, sojourn_sum_ns: u64, sojourn_count: u64) {
        let (m0, s0, n0) = self.last_aqm;
        self.q_marks.push(marked - m0);
        let n = sojourn_count - n0;
        self.q_sojourn_ms.push(if n > 0 {
            (sojourn_sum_ns - s0) as f64 / n as f64 / 1e6
        } else {
            f64::NAN
        });
        self.last_aqm = (marked, sojourn_sum_ns, sojourn_count);
    }

    /// The two tables.
    pub fn finish(self) -> (Table, Table) {
        let mut cols = vec![
            ("time_ns".to_string(), Column::U64(self.time_ns)),
            ("flow".to_string(), Column::U64(self.flow)),
        ];
        for (name, col) in F64_NAMES.iter().zip(self.f64_cols) {
            cols.push((name.to_string(), Column::F64(col)));
        }
        cols.push(("retransmits".into(), Column::U64(self.retransmits)));
        cols.push((
            "ca_state".into(),
            Column::Str(self.ca_state.into_iter().map(String::from).collect()),
        ));
        for (name, col) in self.cc_num {
            cols.push((format!("cc_{name}"), Column::F64(col)));
        }
        for (name, col) in self.cc_label {
            cols.push((
                format!("cc_{name}"),
                Column::Str(col.into_iter().map(String::from).collect()),
            ));
        }
        let with_aqm = !self.q_marks.is_empty();
        let mut q = vec![
            ("time_ns".to_string(), Column::U64(self.q_time)),
            ("backlog_pkts".to_string(), Column::U64(self.q_pkts)),
            ("backlog_bytes".to_string(), Column::U64(self.q_bytes)),
            ("drops".to_string(), Column::U64(self.q_drops)),
        ];
        if with_aqm {
            q.push(("marks".to_string(), Column::U64(self.q_marks)));
            q.push(("sojourn_ms".to_string(), Column::F64(self.q_sojourn_ms)));
        }
        (Table { columns: cols }, Table { columns: q })
    }
}

/// The per-source counters reported at the end of a run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct SourceCounters {
    pub rate_bps: u64,
    pub packet_bytes: u32,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    pub received_packets: u64,
    pub received_bytes: u64,
    pub dropped_packets: u64,
    pub in_flight_packets_at_end: u64,
    /// Time spent in on periods within [start, min(stop, end)).
    pub on_ns: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
}
