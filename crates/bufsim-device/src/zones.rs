//! Zoned disk geometry: where a logical sector lies (cylinder, surface, sector in track) and
//! at what angle its track starts. Sectors fill a cylinder surface by surface before moving
//! inwards, as SCSI disks of the Cheetah's generation lay them out (DiskSim's default
//! mapping). Cylinders that no zone lists (spares between zones) hold no data. Spare sectors
//! inside a zone are not modelled, so capacity is the geometric one.

/// One band of cylinders with the same number of sectors per track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zone {
    pub first_cyl: u32,
    pub last_cyl: u32,
    pub sectors_per_track: u32,
    /// Sectors by which each track's sector 0 trails the previous track's, so a sequential
    /// transfer finds the next track's first sector just after the head has switched.
    pub skew: u32,
    first_lbn: u64,
}

impl Zone {
    fn tracks(&self, surfaces: u32) -> u64 {
        (self.last_cyl - self.first_cyl + 1) as u64 * surfaces as u64
    }
}

/// Where a logical sector lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub zone: usize,
    pub cylinder: u32,
    pub surface: u32,
    pub sector: u32,
    /// Track number within the zone (cylinder-major), which fixes the track's skew.
    pub track_in_zone: u64,
}

#[derive(Clone, Debug)]
pub struct Geometry {
    zones: Vec<Zone>,
    surfaces: u32,
    sectors: u64,
}

impl Geometry {
    /// Parses `first-last:sectors[:skew]` zones separated by `;`, e.g.
    /// `0-846:254;848-1643:245:88`. Zones must ascend without overlapping and lie below
    /// `cylinders`.
    pub fn parse(text: &str, cylinders: u32, surfaces: u32, default_skew: u32) -> Result<Geometry, String> {
        let want = "zones as first-last:sectors-per-track[:skew] separated by `;`, \
                    such as 0-846:254;848-1643:245";
        let mut zones: Vec<Zone> = Vec::new();
        let mut lbn = 0u64;
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let fields: Vec<&str> = part.split(':').map(str::trim).collect();
            if fields.len() < 2 || fields.len() > 3 {
                return Err(format!("zone `{part}`: write {want}"));
            }
            let (first, last) = match fields[0].split_once('-') {
                Some((a, b)) => (a.trim().parse::<u32>(), b.trim().parse::<u32>()),
                None => (fields[0].parse::<u32>(), fields[0].parse::<u32>()),
            };
            let (Ok(first), Ok(last)) = (first, last) else {
                return Err(format!("zone `{part}`: cylinders must be whole numbers; write {want}"));
            };
            let Ok(spt) = fields[1].parse::<u32>() else {
                return Err(format!("zone `{part}`: sectors per track must be a whole number"));
            };
            let skew = match fields.get(2) {
                Some(s) => {
                    s.parse::<u32>().map_err(|_| format!("zone `{part}`: skew must be a whole number of sectors"))?
                }
                None => default_skew,
            };
            if first > last || last >= cylinders {
                return Err(format!("zone `{part}`: cylinders must run upwards and stay below cylinders={cylinders}"));
            }
            if let Some(prev) = zones.last() {
                if first <= prev.last_cyl {
                    return Err(format!("zone `{part}` overlaps or precedes the zone before it"));
                }
            }
            if spt == 0 {
                return Err(format!("zone `{part}` has no sectors per track"));
            }
            let zone =
                Zone { first_cyl: first, last_cyl: last, sectors_per_track: spt, skew: skew % spt, first_lbn: lbn };
            lbn = zone
                .tracks(surfaces)
                .checked_mul(spt as u64)
                .and_then(|n| n.checked_add(lbn))
                .ok_or_else(|| format!("zone `{part}`: the zones hold more than 2^64 sectors"))?;
            zones.push(zone);
        }
        if zones.is_empty() {
            return Err(format!("no zones given; write {want}"));
        }
        Ok(Geometry { zones, surfaces, sectors: lbn })
    }

    /// Total sectors.
    pub fn sectors(&self) -> u64 {
        self.sectors
    }

    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }

    pub fn surfaces(&self) -> u32 {
        self.surfaces
    }

    /// Locates a sector; `lbn` must be below [`Geometry::sectors`].
    #[inline]
    pub fn locate(&self, lbn: u64) -> Location {
        let zi = self.zones.partition_point(|z| z.first_lbn <= lbn) - 1;
        let z = &self.zones[zi];
        let off = lbn - z.first_lbn;
        let spt = z.sectors_per_track as u64;
        let track_in_zone = off / spt;
        let surfaces = self.surfaces as u64;
        Location {
            zone: zi,
            cylinder: z.first_cyl + (track_in_zone / surfaces) as u32,
            surface: (track_in_zone % surfaces) as u32,
            sector: (off % spt) as u32,
            track_in_zone,
        }
    }

    /// The angle, in fractions of a turn, at which a sector starts passing under the head.
    #[inline]
    pub fn angle(&self, loc: &Location) -> f64 {
        let z = &self.zones[loc.zone];
        let spt = z.sectors_per_track as u64;
        let slot = (loc.track_in_zone % spt * z.skew as u64 + loc.sector as u64) % spt;
        slot as f64 / spt as f64
    }

    /// Sectors per track at a location's zone.
    #[inline]
    pub fn spt(&self, loc: &Location) -> u32 {
        self.zones[loc.zone].sectors_per_track
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_sectors_across_zones_and_gaps() {
        // Two zones with a spare cylinder (2) between them, 2 surfaces.
        // zone 0: cylinders 0-1, 4 sectors/track -> lbn 0..16; zone 1: cylinders 3-4, 3 spt.
        let g = Geometry::parse("0-1:4:1; 3-4:3", 5, 2, 0).unwrap();
        assert_eq!(g.sectors(), 16 + 12);
        let l = g.locate(5); // cyl 0, surface 1, sector 1
        assert_eq!((l.zone, l.cylinder, l.surface, l.sector, l.track_in_zone), (0, 0, 1, 1, 1));
        let l = g.locate(8); // cyl 1, surface 0
        assert_eq!((l.cylinder, l.surface, l.sector), (1, 0, 0));
        let l = g.locate(16); // first sector of zone 1 is on cylinder 3
        assert_eq!((l.zone, l.cylinder, l.surface, l.sector), (1, 3, 0, 0));
        let l = g.locate(27);
        assert_eq!((l.cylinder, l.surface, l.sector), (4, 1, 2));
        // Track 1 of zone 0 starts one sector (its skew) later: sector 0 sits at 1/4 turn.
        assert_eq!(g.angle(&g.locate(4)), 0.25);
        assert_eq!(g.angle(&g.locate(7)), 0.0);
    }

    #[test]
    fn bad_zones_are_explained() {
        for bad in ["", "0-10", "5-2:100", "0-10:0", "0-10:100;5-20:90", "0-99:100", "a-b:1"] {
            let e = Geometry::parse(bad, 50, 2, 0).unwrap_err();
            assert!(e.contains("zone"), "{bad}: {e}");
        }
        // 2^32 cylinders x 2^16 surfaces x 2^32 sectors per track: 2^80 sectors, once wrapped.
        let e = Geometry::parse("0-4294967294:4294967295", u32::MAX, 65536, 0).unwrap_err();
        assert!(e.contains("more than 2^64 sectors"), "{e}");
    }
}
