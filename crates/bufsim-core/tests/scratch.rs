//! A trace file written for one test, in a directory of its own under the system's temporary
//! directory, removed when the test is done with it (even when an assertion fails).

use std::path::PathBuf;

pub struct ScratchTrace {
    dir: PathBuf,
    path: PathBuf,
}

impl ScratchTrace {
    /// Writes `text` to `file` in a directory named after `test` and this process.
    pub fn new(test: &str, file: &str, text: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("bufsim-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        ScratchTrace { dir, path }
    }

    pub fn path(&self) -> &str {
        self.path.to_str().unwrap()
    }
}

impl Drop for ScratchTrace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
