//! Dense device numbers for block traces that name several devices (MSR's host and disk,
//! blkparse's and FIU's major,minor, SPC's ASU): numbered from 0 in order of first appearance,
//! so `Request::file` indexes [`DeviceTable::names`].

use rustc_hash::FxHashMap;

/// The engine keeps 16 bits of a device number in its cache keys (`layout::block_key`).
pub const MAX_DEVICES: usize = 1 << 16;

#[derive(Default)]
pub(crate) struct DeviceTable {
    ids: FxHashMap<Box<[u8]>, u32>,
    names: Vec<String>,
    /// The last key looked up: consecutive requests usually hit the same device.
    last_key: Vec<u8>,
    last_id: Option<u32>,
}

impl DeviceTable {
    /// The id of the device with this key; `name` builds its display name the first time.
    /// Errs (with the message to report) past [`MAX_DEVICES`] distinct devices, which also
    /// bounds the table's memory whatever the input.
    #[inline]
    pub(crate) fn id(&mut self, key: &[u8], name: impl FnOnce() -> String) -> Result<u32, String> {
        if let Some(id) = self.last_id {
            if self.last_key == key {
                return Ok(id);
            }
        }
        let id = match self.ids.get(key) {
            Some(&id) => id,
            None => {
                if self.names.len() >= MAX_DEVICES {
                    return Err(format!(
                        "more than {MAX_DEVICES} distinct devices; bufsim numbers devices with 16 bits"
                    ));
                }
                let id = self.names.len() as u32;
                self.ids.insert(key.into(), id);
                self.names.push(name());
                id
            }
        };
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.last_id = Some(id);
        Ok(id)
    }

    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_devices_in_order_of_first_appearance() {
        let mut t = DeviceTable::default();
        assert_eq!(t.id(b"8,0", || "8,0".into()), Ok(0));
        assert_eq!(t.id(b"8,16", || "8,16".into()), Ok(1));
        assert_eq!(t.id(b"8,0", || unreachable!()), Ok(0));
        assert_eq!(t.names(), ["8,0", "8,16"]);
    }

    #[test]
    fn refuses_more_devices_than_the_engine_can_number() {
        let mut t = DeviceTable::default();
        for k in 0..MAX_DEVICES as u32 {
            t.id(&k.to_le_bytes(), String::new).unwrap();
        }
        assert!(t.id(b"one more", String::new).unwrap_err().contains("more than 65536"));
        assert_eq!(t.id(&7u32.to_le_bytes(), String::new), Ok(7));
    }
}
