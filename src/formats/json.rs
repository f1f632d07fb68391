//! The JSON record of a sweep: the configuration, one object per size, and the average bus
//! bandwidth (the field names follow nccl-tests' `-J` output where it has one).

use super::busbw::average_busbw;
use super::record::{ResultRow, SeriesSummary, SweepConfig};
use serde::{Deserialize, Serialize};

/// A whole sweep as written to a `.json` file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepJson {
    /// What was run (with several series, `collective` and `mode` list them all; each
    /// series' own configuration is in `series`).
    pub config: SweepConfig,
    /// One entry per size, in sweep order (per series, with several).
    pub results: Vec<ResultRow>,
    /// Mean of the rows' `busbw_gbps`, as the table footer prints it, when the sweep has one
    /// series; `null` with several (averaging across algorithms means nothing: see `series`).
    pub average_bus_bandwidth: Option<f64>,
    /// One entry per series: its configuration and its own average.
    #[serde(default)]
    pub series: Vec<SeriesSummary>,
}

impl SweepJson {
    /// Bundles a sweep; `average_bus_bandwidth` is computed from the measured (not FAILED)
    /// rows when there is at most one series.
    pub fn new(config: SweepConfig, results: Vec<ResultRow>, series: Vec<SeriesSummary>) -> SweepJson {
        let busbw: Vec<f64> = results.iter().filter(|r| r.failed.is_none()).map(|r| r.busbw_gbps).collect();
        let average_bus_bandwidth = (series.len() <= 1).then(|| average_busbw(&busbw));
        SweepJson { config, average_bus_bandwidth, results, series }
    }
}

/// Pretty-printed JSON of a sweep. Non-finite numbers become `null`.
pub fn to_json_string(sweep: &SweepJson) -> String {
    // Plain structs with string keys: serde_json cannot fail on them.
    serde_json::to_string_pretty(sweep).expect("a SweepJson always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::record::test_row;
    use serde_json::{Value, json};

    fn config() -> SweepConfig {
        SweepConfig {
            machine: "a2a3-8".to_string(),
            ranks: 8,
            collective: "allreduce".to_string(),
            mode: "mesh".to_string(),
            path: "host".to_string(),
            core_num: 1,
            dtype: "float".to_string(),
            redop: "sum".to_string(),
            root: -1,
            min_bytes: 1024,
            max_bytes: 2048,
            step_factor: 2.0,
            warmup: 5,
            iters: 20,
            seed: 7,
            jitter_op_ns: None,
            jitter_dispatch_ns: None,
            timing_only: false,
        }
    }

    fn row(size: u64, busbw: f64, nwrong: Option<u64>) -> ResultRow {
        test_row(size, size / 4, "sum", 10.0, (busbw / 1.75, busbw), nwrong)
    }

    #[test]
    fn json_has_exact_field_names_and_round_trips() {
        let sweep = SweepJson::new(config(), vec![row(1024, 0.25, Some(0)), row(2048, 0.5, None)], Vec::new());
        assert_eq!(sweep.average_bus_bandwidth, Some(0.375));
        let text = to_json_string(&sweep);
        let value: Value = serde_json::from_str(&text).expect("valid JSON");

        let first = &value["results"][0];
        let keys: Vec<&str> = first.as_object().expect("object").keys().map(String::as_str).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ["algbw_gbps", "busbw_gbps", "count", "nwrong", "redop", "root", "size", "time_us", "type"]);
        assert_eq!(first["size"], json!(1024));
        assert_eq!(first["count"], json!(256));
        assert_eq!(first["type"], json!("float"));
        assert_eq!(first["redop"], json!("sum"));
        assert_eq!(first["root"], json!(-1));
        assert_eq!(first["time_us"], json!(10.0));
        assert_eq!(first["busbw_gbps"], json!(0.25));
        assert_eq!(first["nwrong"], json!(0));
        assert_eq!(value["results"][1]["nwrong"], Value::Null);
        assert_eq!(value["average_bus_bandwidth"], json!(0.375));
        assert_eq!(value["config"]["ranks"], json!(8));
        assert_eq!(value["config"]["collective"], json!("allreduce"));
        assert_eq!(value["config"]["timing_only"], json!(false));

        let back: SweepJson = serde_json::from_value(value).expect("deserializes");
        assert_eq!(back, sweep);
    }

    /// A FAILED row: `failed` with its reason, no time or bandwidth (`null`), left out of the
    /// average; it reads back with NaN in those fields.
    #[test]
    fn a_failed_row_has_its_reason_and_no_time() {
        let failed = ResultRow::failed(4096, 1024, "half", "none", -1, "cut short: why".into());
        let sweep = SweepJson::new(config(), vec![row(1024, 0.25, Some(0)), failed], Vec::new());
        assert_eq!(sweep.average_bus_bandwidth, Some(0.25));
        let value: Value = serde_json::from_str(&to_json_string(&sweep)).expect("valid JSON");
        let r = &value["results"][1];
        assert_eq!(r["failed"], json!("cut short: why"));
        assert_eq!((&r["time_us"], &r["algbw_gbps"], &r["busbw_gbps"]), (&Value::Null, &Value::Null, &Value::Null));
        assert!(value["results"][0].get("failed").is_none(), "a measured row has no `failed` key");
        let back: SweepJson = serde_json::from_value(value).expect("deserializes");
        assert!(back.results[1].time_us.is_nan() && back.results[1].failed.as_deref() == Some("cut short: why"));
    }

    #[test]
    fn several_series_average_each_and_not_together() {
        let s = |label: &str, avg| SeriesSummary {
            label: label.to_string(),
            config: config(),
            average_bus_bandwidth: avg,
            peak_bus_bandwidth: avg,
            bound_gbps: Some(137.2),
        };
        let sweep = SweepJson::new(
            config(),
            vec![row(1024, 0.25, Some(0)), row(1024, 100.0, Some(0))],
            vec![s("allreduce mesh core_num 1", 0.25), s("allreduce sdma-mesh core_num 48 -w 1", 100.0)],
        );
        let value: Value = serde_json::from_str(&to_json_string(&sweep)).expect("valid JSON");
        assert_eq!(value["average_bus_bandwidth"], Value::Null);
        assert_eq!(value["series"][1]["average_bus_bandwidth"], json!(100.0));
        assert_eq!(value["series"][1]["label"], json!("allreduce sdma-mesh core_num 48 -w 1"));
        assert_eq!(value["series"][0]["config"]["core_num"], json!(1));
        assert_eq!(value["series"][0]["bound_gbps"], json!(137.2));
    }

    #[test]
    fn empty_sweep_averages_to_zero() {
        let sweep = SweepJson::new(config(), Vec::new(), Vec::new());
        let value: Value = serde_json::from_str(&to_json_string(&sweep)).expect("valid JSON");
        assert_eq!(value["results"], json!([]));
        assert_eq!(value["average_bus_bandwidth"], json!(0.0));
    }
}
