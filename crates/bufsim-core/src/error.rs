//! Errors of a simulation run, typed so the bindings map each kind to its own exception.

use std::fmt;

use bufsim_trace::TraceError;

use crate::spec::SpecError;

#[derive(Clone, Debug)]
pub enum SimError {
    /// The trace: missing, unreadable, unknown format, malformed record.
    Trace(TraceError),
    /// A policy spec, size or other option that cannot be understood.
    Spec(SpecError),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Trace(e) => e.fmt(f),
            SimError::Spec(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SimError {}

impl From<TraceError> for SimError {
    fn from(e: TraceError) -> Self {
        SimError::Trace(e)
    }
}

impl From<SpecError> for SimError {
    fn from(e: SpecError) -> Self {
        SimError::Spec(e)
    }
}
