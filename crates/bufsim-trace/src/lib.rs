//! Trace readers for bufsim.
//!
//! Every reader streams (constant memory in the trace length), yields [`Request`]s and reports
//! malformed input as a [`TraceError`] naming the file, the line (or byte offset) and what to do.
//! Formats are told apart by content ([`detect`]); gzip and zstd files are decompressed as they
//! are read. docs/trace-formats.md describes every format.

mod arc;
mod blkparse;
pub mod bst;
mod cloudphysics;
mod convert;
mod csv;
mod detect;
mod devices;
mod error;
mod fiu;
mod format;
mod input;
mod lcs;
mod lines;
mod lirs;
pub mod msr;
mod oracle;
mod reader;
mod request;
mod spc;
mod writer;

pub use blkparse::BlkEvent;
pub use bst::{BstWriter, Columns};
pub use convert::{convert, ConvertSummary};
pub use detect::{detect, detect_bytes};
pub use devices::MAX_DEVICES;
pub use error::{Location, TraceError, TraceErrorKind};
pub use format::Format;
pub use input::Compression;
pub use lcs::object_block;
pub use oracle::{encode_record as encode_oracle_record, OracleReader, RECORD as ORACLE_RECORD};
pub use reader::{resolve, ReadOptions, SkipReport, TraceReader};
pub use request::{AddressKind, Op, Request};
pub use writer::BlockCsvWriter;
