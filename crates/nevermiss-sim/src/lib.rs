//! Trace-driven stateful-pipeline hazard simulator.
