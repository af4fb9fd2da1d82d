//! The trace formats bufsim reads, their names (`--format`) and what each one addresses.

use bufsim_config::spec::Spec;

use crate::blkparse::BlkEvent;
use crate::request::AddressKind;

/// The trace formats bufsim reads. docs/trace-formats.md describes each one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// bufsim's interchange CSV (file traces).
    Csv,
    /// The interchange CSV with a `device` column in place of `file` (block traces).
    BlockCsv,
    /// CloudPhysics VSCSI CSV (one block device).
    CloudPhysics,
    /// libCacheSim oracleGeneral binary (one access per record to a whole block).
    Oracle,
    /// SNIA MSR Cambridge CSV (Windows filetimes; each host and disk a device).
    Msr,
    /// `blkparse -i` text output; which events are the requests.
    Blkparse(BlkEvent),
    /// SPC-1 traces of the UMass repository (each ASU a device).
    Spc,
    /// FIU traces (`ts pid process lba size rw major minor md5`).
    Fiu,
    /// libCacheSim csv with a header naming `obj_id` (and `time`, `obj_size`, `op`).
    LcsCsv,
    /// libCacheSim plain text: one object id per line.
    LcsTxt,
    /// LIRS / CLOCK-Pro traces: one block number per line, `*` separators.
    Lirs,
    /// ARC paper traces: `start nblocks ignore seq`.
    Arc,
    /// bufsim's binary format; the address kind comes from its header (see [`crate::resolve`]).
    Bst(AddressKind),
}

impl Format {
    /// Every format name `--format` takes (besides `auto`), in the order the docs list them.
    pub const NAMES: [&'static str; 13] = [
        "csv",
        "block-csv",
        "cloudphysics",
        "oracle",
        "msr",
        "blkparse",
        "spc",
        "fiu",
        "lcs-csv",
        "lcs-txt",
        "lirs",
        "arc",
        "bst",
    ];

    /// The format's name; blkparse other than queue events names its event as a spec.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::BlockCsv => "block-csv",
            Format::CloudPhysics => "cloudphysics",
            Format::Oracle => "oracle",
            Format::Msr => "msr",
            Format::Blkparse(BlkEvent::Queue) => "blkparse",
            Format::Blkparse(BlkEvent::Dispatch) => "blkparse(event=D)",
            Format::Blkparse(BlkEvent::Complete) => "blkparse(event=C)",
            Format::Spc => "spc",
            Format::Fiu => "fiu",
            Format::LcsCsv => "lcs-csv",
            Format::LcsTxt => "lcs-txt",
            Format::Lirs => "lirs",
            Format::Arc => "arc",
            Format::Bst(_) => "bst",
        }
    }

    /// Parses a format name or spec (`blkparse(event=C)`); `auto` is handled by the caller
    /// ([`crate::detect`]). The error says what to write instead.
    pub fn parse(text: &str) -> Result<Format, String> {
        let unknown =
            || format!("unknown trace format `{}`; use auto or one of {}", text.trim(), Format::NAMES.join(", "));
        if text.trim().is_empty() {
            return Err(format!("an empty trace format; use auto or one of {}", Format::NAMES.join(", ")));
        }
        let spec = Spec::parse(text).map_err(|e| format!("trace format {e}"))?;
        let format = match spec.name.as_str() {
            "csv" => Format::Csv,
            "block-csv" | "blockcsv" => Format::BlockCsv,
            "cloudphysics" | "vscsi" => Format::CloudPhysics,
            "oracle" | "oraclegeneral" => Format::Oracle,
            "msr" | "msr-cambridge" | "snia" => Format::Msr,
            "blkparse" | "blktrace" => Format::Blkparse(BlkEvent::Queue),
            "spc" | "spc1" | "spc-1" | "umass" => Format::Spc,
            "fiu" => Format::Fiu,
            "lcs-csv" | "libcachesim-csv" => Format::LcsCsv,
            "lcs-txt" | "libcachesim-txt" | "txt" | "plaintxt" => Format::LcsTxt,
            "lirs" => Format::Lirs,
            "arc" => Format::Arc,
            "bst" => Format::Bst(AddressKind::Device),
            _ => return Err(unknown()),
        };
        let mut format = format;
        for (key, value) in &spec.args {
            match (format, key.as_str()) {
                (Format::Blkparse(_), "event") => {
                    let event = BlkEvent::parse(value).ok_or_else(|| {
                        format!(
                            "blkparse event `{value}`: use Q (queued, the default), D (dispatched) or C (completed)"
                        )
                    })?;
                    format = Format::Blkparse(event);
                }
                (Format::Blkparse(_), _) => {
                    return Err(format!("blkparse has one parameter, event (Q, D or C); `{key}` is not it"))
                }
                _ => return Err(format!("trace format `{}` takes no parameters", spec.name)),
            }
        }
        Ok(format)
    }

    /// [`Format::parse`] without the message.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::parse(name).ok()
    }

    pub fn address_kind(self) -> AddressKind {
        match self {
            Format::Csv => AddressKind::File,
            Format::Bst(kind) => kind,
            _ => AddressKind::Device,
        }
    }

    /// Whether requests name whole blocks rather than byte ranges (`Request::in_blocks`);
    /// for `bst` the header says (this answers `false`).
    pub fn in_blocks(self) -> bool {
        matches!(self, Format::Oracle | Format::LcsCsv | Format::LcsTxt | Format::Lirs | Format::Arc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_to_a_format_of_that_name() {
        for name in Format::NAMES {
            assert_eq!(Format::parse(name).unwrap().name(), name);
        }
    }

    #[test]
    fn blkparse_takes_its_event_as_a_parameter() {
        assert_eq!(Format::parse("blkparse(event=C)"), Ok(Format::Blkparse(BlkEvent::Complete)));
        assert_eq!(Format::parse("BLKPARSE(event=d)"), Ok(Format::Blkparse(BlkEvent::Dispatch)));
        assert_eq!(
            Format::parse(Format::Blkparse(BlkEvent::Complete).name()),
            Ok(Format::Blkparse(BlkEvent::Complete))
        );
        assert!(Format::parse("blkparse(event=X)").unwrap_err().contains("use Q"));
        assert!(Format::parse("blkparse(evt=C)").unwrap_err().contains("`evt` is not it"));
        assert!(Format::parse("msr(x=1)").unwrap_err().contains("takes no parameters"));
        assert!(Format::parse("nope").unwrap_err().starts_with("unknown trace format `nope`; use auto or one of csv,"));
    }
}
