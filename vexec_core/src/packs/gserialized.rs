//! Native kernels for PostGIS's 2D bounding-box operators (`&&`, `@`, `~`,
//! `~=`, `<<`, `&<`, `>>`, `&>`, `<<|`, `&<|`, `|>>`, `|&>` on geometry), and
//! for `ST_DWithin` of two points where the distance is clearly on one side
//! of the tolerance ([`dwithin_points`]).
//!
//! PostGIS decides them on BOX2DF, a box of four floats, which it takes from
//! the serialized geometry (GSERIALIZED version 2, PostGIS 3): the box
//! stored in the serialization when there is one, else one computed from
//! the coordinates, each rounded outwards to a float. This module reads the
//! two forms that need no geometry library to be exact: a stored box, and a
//! non-empty 2D/3D/4D point (its box is the point, rounded outwards the way
//! PostGIS's `next_float_down`/`next_float_up` do). Anything else (version
//! 1 serializations, extended flags, empty or other geometries without a
//! stored box, a buffer of the wrong size) is [`None`]: the caller calls
//! PostGIS's own function for that row.

/// The native kernels a pack may name for a declared function
/// (`FunctionV1`'s `native`; 0 means none): a box predicate (1 to 12),
/// [`DWITHIN_POINTS`] or [`FALSE_IF_DISJOINT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Native {
    Box(BoxPredicate),
    DWithinPoints,
    FalseIfDisjoint,
}

/// `ST_DWithin(geometry, geometry, float8)` on two points.
pub const DWITHIN_POINTS: u32 = 13;

/// A spatial predicate that PostGIS answers false, before anything that
/// could raise, for two geometries of one SRID whose boxes do not overlap:
/// ST_Intersects, ST_Contains, ST_Within, ST_Covers, ST_CoveredBy and
/// ST_Touches check the SRIDs, answer false for an EMPTY, then compare the
/// boxes (`gbox_overlaps_2d`, or containment, which disjoint boxes fail
/// too) before calling GEOS. See [`false_if_disjoint`].
pub const FALSE_IF_DISJOINT: u32 = 14;

impl Native {
    pub fn from_id(id: u32) -> Option<Native> {
        match id {
            DWITHIN_POINTS => Some(Native::DWithinPoints),
            FALSE_IF_DISJOINT => Some(Native::FalseIfDisjoint),
            _ => BoxPredicate::from_id(id).map(Native::Box),
        }
    }
}

/// A box predicate's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum BoxPredicate {
    Overlaps = 1,
    Contains = 2,
    Within = 3,
    Same = 4,
    Left = 5,
    Overleft = 6,
    Right = 7,
    Overright = 8,
    Below = 9,
    Overbelow = 10,
    Above = 11,
    Overabove = 12,
}

impl BoxPredicate {
    pub fn from_id(id: u32) -> Option<BoxPredicate> {
        use BoxPredicate::*;
        [
            Overlaps, Contains, Within, Same, Left, Overleft, Right, Overright, Below, Overbelow, Above,
            Overabove,
        ]
        .into_iter()
        .find(|p| *p as u32 == id)
    }

    /// PostGIS's predicate on two boxes (`box2df_overlaps` and friends):
    /// an empty box (NaN xmin) is in no relation but containment, where
    /// everything but EMPTY contains EMPTY.
    #[inline(always)]
    pub fn test(self, a: &Box2df, b: &Box2df) -> bool {
        use BoxPredicate::*;
        let (ea, eb) = (a.is_empty(), b.is_empty());
        match self {
            Contains => {
                (eb && !ea) || !(a.xmin > b.xmin || a.xmax < b.xmax || a.ymin > b.ymin || a.ymax < b.ymax)
            }
            Within => {
                (ea && !eb) || !(a.xmin < b.xmin || a.xmax > b.xmax || a.ymin < b.ymin || a.ymax > b.ymax)
            }
            Same => {
                (ea && eb)
                    || (!ea
                        && !eb
                        && a.xmin == b.xmin
                        && a.xmax == b.xmax
                        && a.ymin == b.ymin
                        && a.ymax == b.ymax)
            }
            _ if ea || eb => false,
            Overlaps => !(a.xmin > b.xmax || b.xmin > a.xmax || a.ymin > b.ymax || b.ymin > a.ymax),
            Left => a.xmax < b.xmin,
            Overleft => a.xmax <= b.xmax,
            Right => a.xmin > b.xmax,
            Overright => a.xmin >= b.xmin,
            Below => a.ymax < b.ymin,
            Overbelow => a.ymax <= b.ymax,
            Above => a.ymin > b.ymax,
            Overabove => a.ymin >= b.ymin,
        }
    }
}

/// PostGIS's BOX2DF.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Box2df {
    pub xmin: f32,
    pub xmax: f32,
    pub ymin: f32,
    pub ymax: f32,
}

impl Box2df {
    fn is_empty(&self) -> bool {
        self.xmin.is_nan()
    }
}

// GSERIALIZED v2 flags (the byte after the 3-byte SRID).
const FLAG_Z: u8 = 0x01;
const FLAG_M: u8 = 0x02;
const FLAG_BBOX: u8 = 0x04;
const FLAG_GEODETIC: u8 = 0x08;
const FLAG_EXTENDED: u8 = 0x10;
const FLAG_VERSION: u8 = 0x40;
const POINT_TYPE: u32 = 1;

/// The next float towards -infinity from `r` (C's `nextafterf(r, -FLT_MAX)`
/// for a finite `r`; NaN stays NaN).
#[inline]
fn next_down(r: f32) -> f32 {
    if r.is_nan() {
        r
    } else if r == 0.0 {
        -f32::from_bits(1)
    } else if r > 0.0 {
        f32::from_bits(r.to_bits() - 1)
    } else {
        f32::from_bits(r.to_bits() + 1)
    }
}

#[inline]
fn next_up(r: f32) -> f32 {
    -next_down(-r)
}

/// PostGIS's `next_float_down`: the largest float not above `d`.
#[inline(always)]
pub fn next_float_down(d: f64) -> f32 {
    if d > f32::MAX as f64 {
        return f32::MAX;
    }
    if d <= -f32::MAX as f64 {
        return -f32::MAX;
    }
    let r = d as f32;
    if (r as f64) <= d {
        r
    } else {
        next_down(r)
    }
}

/// PostGIS's `next_float_up`: the smallest float not below `d`.
#[inline(always)]
pub fn next_float_up(d: f64) -> f32 {
    if d >= f32::MAX as f64 {
        return f32::MAX;
    }
    if d < -f32::MAX as f64 {
        return -f32::MAX;
    }
    let r = d as f32;
    if (r as f64) >= d {
        r
    } else {
        next_up(r)
    }
}

fn f32_at(b: &[u8], at: usize) -> Option<f32> {
    Some(f32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn f64_at(b: &[u8], at: usize) -> Option<f64> {
    Some(f64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// A non-empty point's SRID bytes and (x, y), from its serialization (as
/// [`box2df`] takes it), when it is a plain version 2 point without a stored
/// box; None otherwise.
#[inline]
pub fn point(payload: &[u8]) -> Option<([u8; 3], f64, f64)> {
    let flags = *payload.get(3)?;
    if flags & (FLAG_VERSION | FLAG_EXTENDED | FLAG_BBOX | FLAG_GEODETIC) != FLAG_VERSION {
        return None;
    }
    let ndims = 2 + (flags & FLAG_Z != 0) as usize + (flags & FLAG_M != 0) as usize;
    if u32_at(payload, 4)? != POINT_TYPE || u32_at(payload, 8)? != 1 || payload.len() != 12 + 8 * ndims {
        return None;
    }
    Some(([payload[0], payload[1], payload[2]], f64_at(payload, 12)?, f64_at(payload, 20)?))
}

/// `ST_DWithin(a, b, tolerance)` for two points (from [`point`]), when the
/// answer does not depend on how the distance is rounded: PostGIS computes
/// `sqrt(dx * dx + dy * dy)` and answers `tolerance >= distance` (after
/// raising for a negative tolerance or mixed SRIDs, and capping the
/// distance at FLT_MAX). Both that and this are within a few ulps of the
/// true distance, whatever the compiler contracted into fused
/// multiply-adds, so a distance farther than 1e-12 (relative) from the
/// tolerance decides the same way; nearer, or anything unusual (mixed
/// SRIDs, a negative or NaN tolerance, non-finite or huge values), is None
/// and PostGIS decides.
#[inline]
pub fn dwithin_points(a: ([u8; 3], f64, f64), b: ([u8; 3], f64, f64), tolerance: f64) -> Option<bool> {
    if a.0 != b.0 || !(tolerance >= 0.0) || !tolerance.is_finite() {
        return None;
    }
    let (h, v) = (b.1 - a.1, b.2 - a.2);
    let d = (h * h + v * v).sqrt();
    if !d.is_finite() || d >= 1e37 {
        return None;
    }
    let margin = 1e-12 * d.max(tolerance) + 1e-280;
    if d < tolerance - margin {
        Some(true)
    } else if d > tolerance + margin {
        Some(false)
    } else {
        None
    }
}

/// The BOX2DF PostGIS takes for a geometry, from its serialization without
/// the varlena header (`payload`: 3 bytes of SRID, the flags, then the
/// rest), when it can be read exactly without PostGIS; None otherwise.
#[inline(always)]
pub fn box2df(payload: &[u8]) -> Option<Box2df> {
    let flags = *payload.get(3)?;
    if flags & FLAG_VERSION == 0 || flags & FLAG_EXTENDED != 0 {
        return None;
    }
    // Offsets below are from the payload's start (the serialization's 4).
    if flags & FLAG_BBOX != 0 {
        let ndims = if flags & FLAG_GEODETIC != 0 {
            3
        } else {
            2 + (flags & FLAG_Z != 0) as usize + (flags & FLAG_M != 0) as usize
        };
        // The box must be there in full, as PostGIS checks.
        if payload.len() < 4 + 2 * ndims * 4 {
            return None;
        }
        return Some(Box2df {
            xmin: f32_at(payload, 4)?,
            xmax: f32_at(payload, 8)?,
            ymin: f32_at(payload, 12)?,
            ymax: f32_at(payload, 16)?,
        });
    }
    if flags & FLAG_GEODETIC != 0 {
        return None;
    }
    // A point: <type><npoints> then its coordinates, nothing after them.
    let ndims = 2 + (flags & FLAG_Z != 0) as usize + (flags & FLAG_M != 0) as usize;
    if u32_at(payload, 4)? != POINT_TYPE || u32_at(payload, 8)? != 1 || payload.len() != 12 + 8 * ndims {
        return None;
    }
    let (x, y) = (f64_at(payload, 12)?, f64_at(payload, 20)?);
    Some(Box2df {
        xmin: next_float_down(x),
        xmax: next_float_up(x),
        ymin: next_float_down(y),
        ymax: next_float_up(y),
    })
}

/// The SRID bytes and BOX2DF of a geometry (as [`box2df`] takes it) for
/// [`false_if_disjoint`]: not geodetic, a box read exactly and no NaN in
/// it; None otherwise.
#[inline(always)]
pub fn srid_box(payload: &[u8]) -> Option<([u8; 3], Box2df)> {
    if payload.get(3)? & FLAG_GEODETIC != 0 {
        return None;
    }
    let b = box2df(payload)?;
    if [b.xmin, b.xmax, b.ymin, b.ymax].iter().any(|f| f.is_nan()) {
        return None;
    }
    Some(([payload[0], payload[1], payload[2]], b))
}

/// Some(false) when a [`FALSE_IF_DISJOINT`] predicate of the two
/// geometries (from [`srid_box`]) is false for sure: one SRID and boxes
/// that do not overlap. PostGIS compares the exact boxes (doubles); BOX2DF
/// rounds them outwards to floats and clamps them to the float range, both
/// monotone, so exact boxes that overlap have BOX2DFs that overlap, and
/// BOX2DFs that do not overlap come from exact boxes that do not. None:
/// PostGIS decides (and raises its errors).
#[inline(always)]
pub fn false_if_disjoint(a: ([u8; 3], Box2df), b: ([u8; 3], Box2df)) -> Option<bool> {
    (a.0 == b.0 && !BoxPredicate::Overlaps.test(&a.1, &b.1)).then_some(false)
}

/// `point && box` for a constant box, decided on the point's coordinates
/// as doubles, without rounding them: PostGIS's box of a point is
/// [down(x), up(x)] x [down(y), up(y)] (the floats around x and y,
/// [`next_float_down`]/[`next_float_up`]), and for a float F and an x
/// strictly inside the float range, down(x) > F exactly when x >= the
/// next float above F (a float in (F, x] exists), and up(x) < F exactly
/// when x <= the float below F. So the boxes overlap exactly when
/// below(xmin) < x < above(xmax), and the same for y.
#[derive(Debug, Clone, Copy)]
pub struct PointOverlaps {
    x: (f64, f64),
    y: (f64, f64),
}

impl PointOverlaps {
    /// For the constant box `c`; None unless its four floats are finite
    /// (an EMPTY box, NaN, is in no relation).
    pub fn new(c: &Box2df) -> Option<PointOverlaps> {
        let finite = [c.xmin, c.xmax, c.ymin, c.ymax].iter().all(|f| f.is_finite());
        finite.then(|| PointOverlaps {
            x: (next_down(c.xmin) as f64, next_up(c.xmax) as f64),
            y: (next_down(c.ymin) as f64, next_up(c.ymax) as f64),
        })
    }

    /// Whether the geometry `payload` (as [`box2df`] takes it) overlaps
    /// the box, when it is a point with both coordinates inside the float
    /// range; None otherwise (the caller asks [`box2df`]).
    #[inline(always)]
    pub fn test(&self, payload: &[u8]) -> Option<bool> {
        let (_, x, y) = point(payload)?;
        let max = f32::MAX as f64;
        if !(x.abs() < max && y.abs() < max) {
            return None; // NaN, infinite or clamped by PostGIS
        }
        Some(self.x.0 < x && x < self.x.1 && self.y.0 < y && y < self.y.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v2 point's payload (after the varlena header).
    fn point_bytes(x: f64, y: f64, z: Option<f64>) -> Vec<u8> {
        let mut v = vec![0, 0, 0, FLAG_VERSION | if z.is_some() { FLAG_Z } else { 0 }];
        v.extend_from_slice(&POINT_TYPE.to_ne_bytes());
        v.extend_from_slice(&1u32.to_ne_bytes());
        for c in [Some(x), Some(y), z].into_iter().flatten() {
            v.extend_from_slice(&c.to_ne_bytes());
        }
        v
    }

    fn boxed(b: [f32; 4], rest: &[u8]) -> Vec<u8> {
        let mut v = vec![0x10, 0x0f, 0, FLAG_VERSION | FLAG_BBOX];
        b.iter().for_each(|f| v.extend_from_slice(&f.to_ne_bytes()));
        v.extend_from_slice(rest);
        v
    }

    #[test]
    fn disjoint_boxes_of_one_srid_are_false() {
        let at = |x: f64, y: f64, srid: u8| {
            let mut p = point_bytes(x, y, None);
            p[2] = srid;
            srid_box(&p)
        };
        let square = srid_box(&boxed([0.0, 10.0, 0.0, 10.0], &[])).unwrap();
        let (inside, edge, outside) =
            (at(5.0, 5.0, 0).unwrap(), at(10.0, 0.0, 0).unwrap(), at(10.5, 0.0, 0).unwrap());
        // boxed() carries SRID bytes 0x10 0x0f 0: give the points the same.
        let same = |mut b: ([u8; 3], Box2df)| {
            b.0 = square.0;
            b
        };
        assert_eq!(false_if_disjoint(same(outside), square), Some(false));
        assert_eq!(false_if_disjoint(square, same(outside)), Some(false));
        assert_eq!(false_if_disjoint(same(inside), square), None);
        assert_eq!(false_if_disjoint(same(edge), square), None, "touching boxes overlap");
        // Another SRID: PostGIS raises, so not decided.
        assert_eq!(false_if_disjoint(outside, square), None);
        // A point just past the edge by less than a float step: its box
        // (rounded outwards) touches the square's, PostGIS decides.
        assert_eq!(false_if_disjoint(same(at(10.0 + 1e-12, 0.0, 0).unwrap()), square), None);
        // NaN, EMPTY, geodetic: no box to decide on.
        assert!(at(f64::NAN, 0.0, 0).is_none());
        let mut geodetic = point_bytes(1.0, 1.0, None);
        geodetic[3] |= FLAG_GEODETIC;
        assert!(srid_box(&geodetic).is_none());
        assert_eq!(Native::from_id(FALSE_IF_DISJOINT), Some(Native::FalseIfDisjoint));
    }

    #[test]
    fn point_overlaps_is_the_box_test() {
        // Coordinates at and around floats (the doubles next to a float, the
        // floats next to it), tiny, -0, huge, non-finite; boxes of such floats.
        let mut floats =
            vec![0.0f32, -0.0, 0.1, -0.1, 1.0, 20.0, 30.0, 1e-40, -1e-40, f32::MAX, -f32::MAX, 16777217.0];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..40 {
            floats.push(
                f32::from_bits(random() as u32 & 0x7fff_ffff) * if random() % 2 == 0 { 1.0 } else { -1.0 },
            );
        }
        floats.retain(|f| f.is_finite());
        let mut coords: Vec<f64> = vec![f64::NAN, f64::INFINITY, -f64::INFINITY, 1e39, -1e39, 3.4028235e38];
        for &f in &floats {
            let d = f as f64;
            let step = |d: f64, up: bool| {
                if d == 0.0 {
                    return if up { f64::from_bits(1) } else { -f64::from_bits(1) };
                }
                let b = d.to_bits();
                f64::from_bits(if (d > 0.0) == up { b + 1 } else { b - 1 })
            };
            coords.extend([d, step(d, true), step(d, false), next_up(f) as f64, next_down(f) as f64]);
        }
        let mut boxes = vec![Box2df { xmin: f32::NAN, xmax: f32::NAN, ymin: f32::NAN, ymax: f32::NAN }];
        for _ in 0..300 {
            let pick = |r: u64| floats[(r % floats.len() as u64) as usize];
            boxes.push(Box2df {
                xmin: pick(random()),
                xmax: pick(random()),
                ymin: pick(random()),
                ymax: pick(random()),
            });
        }
        let mut decided = 0;
        for c in &boxes {
            let fast = PointOverlaps::new(c);
            assert_eq!(fast.is_some(), !c.is_empty());
            for _ in 0..400 {
                let pick = |r: u64| coords[(r % coords.len() as u64) as usize];
                let (x, y) = (pick(random()), pick(random()));
                let p = point_bytes(x, y, None);
                let exact = BoxPredicate::Overlaps.test(&box2df(&p).unwrap(), c);
                if let Some(f) = fast.and_then(|f| f.test(&p)) {
                    assert_eq!(f, exact, "point ({x:e}, {y:e}) and {c:?}");
                    decided += 1;
                }
            }
        }
        assert!(decided > 50_000, "{decided}");
        // Not points: None.
        let b = PointOverlaps::new(&Box2df { xmin: 0.0, xmax: 1.0, ymin: 0.0, ymax: 1.0 }).unwrap();
        assert_eq!(b.test(&boxed([0.0, 1.0, 0.0, 1.0], &[])), None);
        assert_eq!(b.test(&point_bytes(0.5, 0.5, None)), Some(true));
    }

    #[test]
    fn float_rounding_is_outwards_and_exact_on_floats() {
        for d in [0.1f64, -0.1, 1.0 / 3.0, 1e-45, -1e-45, 123456.789, 0.0, -0.0, 3.4e38, -3.4e38] {
            let (lo, hi) = (next_float_down(d), next_float_up(d));
            assert!((lo as f64) <= d && (hi as f64) >= d, "{d}");
            // Tight: the next float past each bound is on the other side.
            if lo > -f32::MAX {
                assert!((next_up(lo) as f64) > d || lo as f64 == d);
            }
        }
        assert_eq!(next_float_down(0.5), 0.5);
        assert_eq!(next_float_up(0.5), 0.5);
        assert_eq!(next_float_down(1e300), f32::MAX);
        assert_eq!(next_float_up(-1e300), -f32::MAX);
        assert!(next_float_down(f64::NAN).is_nan());
        assert_eq!(next_down(0.0), -f32::from_bits(1));
        assert_eq!(next_up(-f32::from_bits(1)), -0.0);
    }

    #[test]
    fn reads_points_and_stored_boxes_only() {
        let p = box2df(&point_bytes(0.1, 2.0, None)).unwrap();
        assert_eq!((p.xmin, p.xmax, p.ymin, p.ymax), (next_float_down(0.1), next_float_up(0.1), 2.0, 2.0));
        assert!(p.xmin < p.xmax);
        assert!(box2df(&point_bytes(1.0, 2.0, Some(3.0))).is_some());
        let stored = box2df(&boxed([1.0, 2.0, 3.0, 4.0], &[0; 8])).unwrap();
        assert_eq!((stored.xmin, stored.ymax), (1.0, 4.0));
        // Version 1, extended flags, empty points, truncated or longer
        // buffers, other types without a box: PostGIS's business.
        let mut v1 = point_bytes(1.0, 2.0, None);
        v1[3] &= !FLAG_VERSION;
        assert!(box2df(&v1).is_none());
        let mut ext = point_bytes(1.0, 2.0, None);
        ext[3] |= FLAG_EXTENDED;
        assert!(box2df(&ext).is_none());
        let mut empty = point_bytes(1.0, 2.0, None);
        empty[8] = 0;
        empty.truncate(12);
        assert!(box2df(&empty).is_none());
        let p = point_bytes(1.0, 2.0, None);
        assert!(box2df(&p[..p.len() - 1]).is_none());
        assert!(box2df(&[p.clone(), vec![0]].concat()).is_none());
        let mut line = point_bytes(1.0, 2.0, None);
        line[4] = 2;
        assert!(box2df(&line).is_none());
        assert!(box2df(&boxed([1.0, 2.0, 3.0, 4.0], &[])[..18]).is_none());
    }

    #[test]
    fn dwithin_decides_only_clear_cases() {
        let p = |x: f64, y: f64| point(&point_payload(x, y)).unwrap();
        assert_eq!(dwithin_points(p(0.0, 0.0), p(3.0, 4.0), 5.1), Some(true));
        assert_eq!(dwithin_points(p(0.0, 0.0), p(3.0, 4.0), 4.9), Some(false));
        // On the boundary, PostGIS's own arithmetic decides.
        assert_eq!(dwithin_points(p(0.0, 0.0), p(3.0, 4.0), 5.0), None);
        assert_eq!(dwithin_points(p(0.1, 0.2), p(0.1, 0.2), 0.0), None);
        assert_eq!(dwithin_points(p(0.1, 0.2), p(0.1, 0.2), 1.0), Some(true));
        // Negative, NaN or infinite tolerances, huge or non-finite
        // coordinates, mixed SRIDs: PostGIS's (errors included).
        assert_eq!(dwithin_points(p(0.0, 0.0), p(1.0, 1.0), -1.0), None);
        assert_eq!(dwithin_points(p(0.0, 0.0), p(1.0, 1.0), f64::NAN), None);
        assert_eq!(dwithin_points(p(0.0, 0.0), p(1.0, 1.0), f64::INFINITY), None);
        assert_eq!(dwithin_points(p(0.0, 0.0), p(1e300, 1.0), 1.0), None);
        assert_eq!(dwithin_points(p(f64::NAN, 0.0), p(1.0, 1.0), 1.0), None);
        let mut srid = p(0.0, 0.0);
        srid.0 = [0, 0x10, 0xe6];
        assert_eq!(dwithin_points(srid, p(0.0, 0.0), 1.0), None);
        // Only plain v2 points are read.
        let mut z = point_payload(1.0, 2.0);
        z[3] |= FLAG_BBOX;
        assert!(point(&z).is_none());
        assert!(point(&point_bytes(1.0, 2.0, Some(3.0))).is_some());
        assert_eq!(Native::from_id(DWITHIN_POINTS), Some(Native::DWithinPoints));
        assert_eq!(Native::from_id(1), Some(Native::Box(BoxPredicate::Overlaps)));
        assert_eq!(Native::from_id(15), None);
    }

    fn point_payload(x: f64, y: f64) -> Vec<u8> {
        point_bytes(x, y, None)
    }

    #[test]
    fn predicates_follow_postgis_on_empty_boxes() {
        let b = |xmin, xmax, ymin, ymax| Box2df { xmin, xmax, ymin, ymax };
        let (a, c, e) =
            (b(0.0, 2.0, 0.0, 2.0), b(1.0, 1.5, 1.0, 1.5), b(f32::NAN, f32::NAN, f32::NAN, f32::NAN));
        use BoxPredicate::*;
        assert!(
            Overlaps.test(&a, &c) && Contains.test(&a, &c) && Within.test(&c, &a) && !Within.test(&a, &c)
        );
        assert!(!Overlaps.test(&a, &e) && Contains.test(&a, &e) && Within.test(&e, &a));
        // PostGIS compares an empty box's NaNs like any floats: no
        // comparison is true, so the containment tests do not fail.
        assert!(Contains.test(&e, &e) && Contains.test(&e, &a) && Within.test(&a, &e));
        assert!(Same.test(&e, &e) && !Same.test(&a, &e) && Same.test(&a, &a));
        assert!(Left.test(&b(0.0, 1.0, 0.0, 1.0), &b(2.0, 3.0, 0.0, 1.0)) && !Left.test(&a, &e));
        assert!(Overabove.test(&c, &a) && !Above.test(&c, &a));
        for id in 1..=12 {
            assert_eq!(BoxPredicate::from_id(id).map(|p| p as u32), Some(id));
        }
        assert!(BoxPredicate::from_id(0).is_none() && BoxPredicate::from_id(13).is_none());
    }
}
