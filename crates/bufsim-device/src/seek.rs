//! Seek time as a function of cylinder distance: Ruemmler & Wilkes's two-piece curve
//! ("An introduction to disk drive modeling", IEEE Computer 1994, §"Seek time"): a + b·√d for
//! short seeks, where the arm is still accelerating, and c + e·d for long ones, where it
//! coasts. We fit the four coefficients so the curve passes exactly through the three figures
//! a datasheet gives: the single-cylinder time t(1), the full-stroke time t(C−1) and the
//! average over uniformly random pairs of distinct cylinders (the manufacturers' weighted
//! average, weight C − d for distance d), with the two pieces meeting at the knee.
//! DiskSim's three-point curve (Lee's formula, REFERENCES.md) meets the same three figures
//! only in the continuous limit; the discrete fit here meets them exactly.

/// The fitted curve; times in nanoseconds.
#[derive(Clone, Debug)]
pub struct SeekCurve {
    a: f64,
    b: f64,
    c: f64,
    e: f64,
    knee: u32,
}

impl SeekCurve {
    /// Fits a curve for a disk of `cylinders` cylinders. `knee` is the first distance served
    /// by the linear piece (2 ≤ knee ≤ cylinders − 2). Errors say what to change.
    pub fn fit(cylinders: u32, single_ns: f64, avg_ns: f64, full_ns: f64, knee: u32) -> Result<SeekCurve, String> {
        if cylinders < 4 {
            return Err(format!("a seek curve needs at least 4 cylinders (got {cylinders})"));
        }
        if knee < 2 || knee > cylinders - 2 {
            return Err(format!("seek-knee {knee} must lie between 2 and {} cylinders (cylinders − 2)", cylinders - 2));
        }
        if !(single_ns <= avg_ns && avg_ns <= full_ns) {
            return Err(format!(
                "seek times must satisfy single ≤ avg ≤ full (got {} ≤ {} ≤ {} ms)",
                single_ns / 1e6,
                avg_ns / 1e6,
                full_ns / 1e6
            ));
        }
        let n = cylinders as f64;
        let dmax = n - 1.0;
        let kf = knee as f64;
        let [w_lo, ws_lo, w_hi, wd_hi] = if cylinders <= SUMMED_CYLINDERS {
            weights_summed(cylinders, knee)
        } else {
            weights_closed(cylinders, knee)
        };
        let total = n * (n - 1.0) / 2.0;
        // Unknowns (a, b, c, e): t(1) = single, t(dmax) = full, pieces meet at the knee,
        // weighted mean = avg.
        let mut m = [
            [1.0, 1.0, 0.0, 0.0, single_ns],
            [0.0, 0.0, 1.0, dmax, full_ns],
            [1.0, kf.sqrt(), -1.0, -kf, 0.0],
            [w_lo / total, ws_lo / total, w_hi / total, wd_hi / total, avg_ns],
        ];
        let x = solve4(&mut m).ok_or("the seek figures give a singular fit; change seek-knee")?;
        let curve = SeekCurve { a: x[0], b: x[1], c: x[2], e: x[3], knee };
        if curve.b < 0.0 || curve.e < 0.0 || curve.a < 0.0 {
            return Err(format!(
                "no rising sqrt-then-linear curve passes through single={} ms, avg={} ms, \
                 full={} ms with the knee at {knee} cylinders; bring seek-avg closer to the \
                 middle of the other two or move seek-knee",
                single_ns / 1e6,
                avg_ns / 1e6,
                full_ns / 1e6
            ));
        }
        Ok(curve)
    }

    /// Seek time for a move of `distance` cylinders (0 for none).
    #[inline]
    pub fn time_ns(&self, distance: u32) -> f64 {
        if distance == 0 {
            0.0
        } else if distance < self.knee {
            self.a + self.b * (distance as f64).sqrt()
        } else {
            self.c + self.e * distance as f64
        }
    }

    pub fn knee(&self) -> u32 {
        self.knee
    }
}

/// Disks up to this many cylinders (every real one) have the fit's weights summed term by
/// term; larger ones take closed forms, so a fit never costs time in proportion to the
/// cylinders (2^32 of them took over a minute per device).
const SUMMED_CYLINDERS: u32 = 1 << 20;

/// The fit's weighted sums over distances d = 1..C−1 with weight C − d, split at the knee:
/// Σ w and Σ w·√d below it, Σ w and Σ w·d from it on.
fn weights_summed(cylinders: u32, knee: u32) -> [f64; 4] {
    let (mut w_lo, mut ws_lo, mut w_hi, mut wd_hi) = (0.0, 0.0, 0.0, 0.0);
    for d in 1..cylinders {
        let w = (cylinders - d) as f64;
        if d < knee {
            w_lo += w;
            ws_lo += w * (d as f64).sqrt();
        } else {
            w_hi += w;
            wd_hi += w * d as f64;
        }
    }
    [w_lo, ws_lo, w_hi, wd_hi]
}

/// [`weights_summed`] in closed form: the polynomial sums exactly in integers, Σ (C − d)·√d as
/// C·Σ d^(1/2) − Σ d^(3/2) by [`power_sum`].
fn weights_closed(cylinders: u32, knee: u32) -> [f64; 4] {
    let (c, k) = (cylinders as u128, knee as u128);
    // Σ_{d=1}^{m} d and d².
    let s1 = |m: u128| m * (m + 1) / 2;
    let s2 = |m: u128| m * (m + 1) * (2 * m + 1) / 6;
    let w_lo = (k - 1) * c - s1(k - 1);
    let w_hi = s1(c - k);
    let wd_hi = c * (s1(c - 1) - s1(k - 1)) - (s2(c - 1) - s2(k - 1));
    let m = knee as u64 - 1;
    let ws_lo = cylinders as f64 * power_sum(0.5, m) - power_sum(1.5, m);
    [w_lo as f64, ws_lo, w_hi as f64, wd_hi as f64]
}

/// Σ_{d=1}^{m} d^p: term by term up to 2^16, the rest by Euler–Maclaurin up to the third
/// derivative's term, whose remainder there is below 10^-17 of a term.
fn power_sum(p: f64, m: u64) -> f64 {
    const DIRECT: u64 = 1 << 16;
    let f = |x: f64| x.powf(p);
    if m < DIRECT {
        return (1..=m).map(|d| f(d as f64)).sum();
    }
    let head: f64 = (1..DIRECT).map(|d| f(d as f64)).sum();
    let (a, b) = (DIRECT as f64, m as f64);
    let d1 = |x: f64| p * x.powf(p - 1.0);
    let d3 = |x: f64| p * (p - 1.0) * (p - 2.0) * x.powf(p - 3.0);
    let integral = (b.powf(p + 1.0) - a.powf(p + 1.0)) / (p + 1.0);
    head + integral + (f(a) + f(b)) / 2.0 + (d1(b) - d1(a)) / 12.0 - (d3(b) - d3(a)) / 720.0
}

/// Gaussian elimination with partial pivoting on a 4×5 augmented matrix.
fn solve4(m: &mut [[f64; 5]; 4]) -> Option<[f64; 4]> {
    for col in 0..4 {
        let pivot = (col..4).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        for row in 0..4 {
            if row != col {
                let f = m[row][col] / m[col][col];
                let pivot_row = m[col];
                for (cell, p) in m[row].iter_mut().zip(pivot_row).skip(col) {
                    *cell -= f * p;
                }
            }
        }
    }
    Some(std::array::from_fn(|i| m[i][4] / m[i][i]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean over uniformly random pairs of distinct cylinders, computed by brute force over
    /// pairs (i, j) rather than by the weights the fit uses.
    fn pair_mean(curve: &SeekCurve, cylinders: u32) -> f64 {
        let mut sum = 0.0;
        let mut count = 0u64;
        for i in 0..cylinders {
            for j in (i + 1)..cylinders {
                sum += curve.time_ns(j - i);
                count += 1;
            }
        }
        sum / count as f64
    }

    #[test]
    fn cheetah_curve_passes_through_its_three_points() {
        // ST39102LW: 1 cyl 0.831 ms, full stroke 10.627 ms, average 5.47 ms (REFERENCES.md).
        let c = SeekCurve::fit(6962, 0.831e6, 5.47e6, 10.627e6, 1200).unwrap();
        assert!((c.time_ns(1) - 0.831e6).abs() < 1e-6);
        assert!((c.time_ns(6961) - 10.627e6).abs() < 1e-6);
        let mean = pair_mean(&c, 6962);
        assert!((mean / 5.47e6 - 1.0).abs() < 0.01, "mean {mean}");
        // Including same-cylinder pairs (seek 0) moves the mean by 1/C only.
        assert!((mean / 5.47e6 - 1.0).abs() < 1e-9, "the fit is exact over distinct pairs");
        // The pieces meet at the knee and the curve never falls.
        assert!((c.time_ns(1199) - c.time_ns(1200)).abs() < 0.01e6);
        assert!((1..6961).all(|d| c.time_ns(d + 1) >= c.time_ns(d) - 1e-6));
        // Close to DiskSim's extracted table in the long range (1000 -> 4.118, 3000 -> 6.345 ms).
        assert!((c.time_ns(1000) / 4.118e6 - 1.0).abs() < 0.02);
        assert!((c.time_ns(3000) / 6.345e6 - 1.0).abs() < 0.02);
    }

    #[test]
    fn closed_form_weights_match_the_summed_ones() {
        for (cylinders, knee) in [(6962, 1200), (70_000, 2), (70_000, 69_998), (3_000_000, 510_000)] {
            let (a, b) = (weights_summed(cylinders, knee), weights_closed(cylinders, knee));
            for (x, y) in a.iter().zip(b) {
                assert!((x / y - 1.0).abs() < 1e-9, "{cylinders} {knee}: {a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn a_disk_of_2_to_the_32_cylinders_fits_at_once() {
        // Summed term by term, this fit took over a minute.
        let knee = u32::MAX / 6;
        let c = SeekCurve::fit(u32::MAX, 0.831e6, 5.47e6, 10.627e6, knee).unwrap();
        assert!((c.time_ns(1) - 0.831e6).abs() < 1e-3 && (c.time_ns(u32::MAX - 1) - 10.627e6).abs() < 1e-3);
        assert!(c.time_ns(1000) < c.time_ns(knee) && c.time_ns(knee) < c.time_ns(u32::MAX - 1));
    }

    #[test]
    fn impossible_figures_are_refused() {
        assert!(SeekCurve::fit(6962, 5.0e6, 1.0e6, 10.0e6, 1200).is_err());
        assert!(SeekCurve::fit(6962, 0.8e6, 10.5e6, 10.6e6, 1200).is_err());
        assert!(SeekCurve::fit(6962, 0.8e6, 5.0e6, 10.0e6, 1).is_err());
        assert!(SeekCurve::fit(3, 0.8e6, 5.0e6, 10.0e6, 2).is_err());
    }
}
