//! Shared by the integration tests: where the bundled trace lives.

use std::path::PathBuf;

pub fn cloudphysics() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/cloudphysics_vscsi.csv")
        .to_string_lossy()
        .into_owned()
}
