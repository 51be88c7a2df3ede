//! `--samples FILE`: per-packet latency samples as CSV, in packet order (papers/000 Fig. 5
//! plots latency over the packet index; the histograms and logs lose that order).
//!
//! One row per kept packet of the first run of every latency point:
//! `scenario,m,r,index,phase,class,ticks` — the point (scenario, phase-1 keys m, insertion
//! rate r), the packet's index in the run (from 0), its phase (1 for the first m packets, else
//! 2), its class (as in the JSON) and its TSC ticks. Which packets are kept:
//! [`crate::latency::SampleRule`].

use crate::error::BenchError;
use crate::latency::Sample;
use crate::scenario::Scenario;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The CSV header line.
pub const HEADER: &str = "scenario,m,r,index,phase,class,ticks";

/// The samples file: created (header written) before anything is measured, so an unwritable
/// path fails at once; rows appended per point.
pub struct SamplesOut {
    path: PathBuf,
    w: BufWriter<File>,
    rows: u64,
}

impl SamplesOut {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path) -> Result<SamplesOut, BenchError> {
        let err = |error| BenchError::Samples {
            path: path.to_path_buf(),
            error,
        };
        let f = File::create(path).map_err(err)?;
        let mut w = BufWriter::new(f);
        writeln!(w, "{HEADER}").map_err(err)?;
        Ok(SamplesOut {
            path: path.to_path_buf(),
            w,
            rows: 0,
        })
    }

    /// Appends the samples of one point's run (phase 1 is `index < m`).
    pub fn write_point(
        &mut self,
        scenario: Scenario,
        m: u64,
        r: u64,
        samples: &[Sample],
    ) -> Result<(), BenchError> {
        for s in samples {
            let phase = if s.index < m { 1 } else { 2 };
            writeln!(
                self.w,
                "{},{m},{r},{},{phase},{},{}",
                scenario.name(),
                s.index,
                s.class.name(),
                s.ticks
            )
            .map_err(|error| BenchError::Samples {
                path: self.path.clone(),
                error,
            })?;
        }
        self.rows += samples.len() as u64;
        Ok(())
    }

    /// Flushes the file; returns the number of rows written.
    pub fn finish(mut self) -> Result<u64, BenchError> {
        self.w.flush().map_err(|error| BenchError::Samples {
            path: self.path.clone(),
            error,
        })?;
        Ok(self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Class;

    #[test]
    fn rows_carry_the_point_and_the_phase() {
        let p = std::env::temp_dir().join(format!("nm-samples-{}.csv", std::process::id()));
        let mut out = SamplesOut::create(&p).unwrap();
        let s = [
            Sample {
                index: 0,
                class: Class::Insert,
                ticks: 900,
            },
            Sample {
                index: 70,
                class: Class::NewKeyInsert,
                ticks: 1200,
            },
        ];
        out.write_point(Scenario::AddOnMiss, 64, 10, &s).unwrap();
        assert_eq!(out.finish().unwrap(), 2);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text,
            format!(
                "{HEADER}\nadd-on-miss,64,10,0,1,insert,900\nadd-on-miss,64,10,70,2,new-key-insert,1200\n"
            )
        );
        let _ = std::fs::remove_file(&p);
        assert!(SamplesOut::create(Path::new("/nonexistent-dir/x.csv")).is_err());
    }
}
