//! The vectorized aggregates (`Transition`), their codes in plans, and
//! which share or combine states.

#[allow(unused_imports)]
use super::*;

/// Which float statistic the moments state ends in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MomentsFinal {
    Avg,
    VarPop,
    VarSamp,
    StddevPop,
    StddevSamp,
}

/// The vectorized aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// count(*).
    CountRows,
    /// count(x): non-NULL inputs.
    CountValues,
    /// count(DISTINCT x) over a hashable key kind.
    CountDistinct(KeyKind),
    /// sum(DISTINCT x) over int2/int4: int8 result, wrapping (SumInt over
    /// the distinct values of each group; a sum does not depend on the
    /// order PostgreSQL's sort feeds them in).
    SumDistinctInt,
    /// sum(DISTINCT x) over int8: numeric result.
    SumDistinctBigInt,
    /// avg(DISTINCT x) over int2/int4/int8: numeric result.
    AvgDistinctInt,
    /// sum over int2/int4: int8 result, wrapping.
    SumInt,
    /// sum over int8: numeric result from an int128 sum.
    SumBigInt,
    /// avg over int2/int4/int8: numeric result (the host divides).
    AvgInt,
    /// sum over numeric.
    SumNumeric,
    /// avg over numeric (the host divides).
    AvgNumeric,
    SumFloat4,
    SumFloat8,
    /// avg/var/stddev over float4 (`float4 = true`) or float8.
    Moments {
        fin: MomentsFinal,
    },
    /// min (`max = false`) or max over a by-value column in native order
    /// (integers, dates, timestamps, bool for bool_and/bool_or/every).
    MinMaxInt {
        max: bool,
    },
    /// min/max over float4/float8 in PostgreSQL's order (NaN above all).
    MinMaxFloat {
        max: bool,
    },
    /// min/max over text/varchar under the C collation (bytewise).
    MinMaxBytes {
        max: bool,
    },
    /// min/max over numeric (`numeric_smaller`/`numeric_larger`).
    MinMaxNumeric {
        max: bool,
    },
    /// Any other aggregate: its own transition and final functions, called
    /// by the host through fmgr (no [`Accumulator`] state). `raises`: the
    /// transition function may raise an error.
    Fmgr {
        raises: bool,
    },
}

impl Transition {
    /// Whether the transition can end the query with an error (float overflow).
    pub fn can_raise(self) -> bool {
        matches!(
            self,
            Transition::SumFloat4
                | Transition::SumFloat8
                | Transition::Moments { .. }
                | Transition::Fmgr { raises: true }
        )
    }

    /// Whether an aggregate of transition `other` over the same argument
    /// (and FILTER) can read its result from this one's state, as
    /// PostgreSQL shares one transition state between sum and avg of a
    /// numeric or int8, and between avg, variance and stddev of a float.
    pub fn shares_state(self, other: Transition) -> bool {
        use Transition::*;
        let class = |t: Transition| match t {
            SumNumeric | AvgNumeric => Some(0),
            SumBigInt | AvgInt => Some(1),
            Moments { .. } => Some(2),
            CountDistinct(_) | SumDistinctInt | SumDistinctBigInt | AvgDistinctInt | Fmgr { .. } => None,
            _ => Some(3),
        };
        match (class(self), class(other)) {
            (Some(a), Some(b)) => self == other || (a < 3 && a == b),
            _ => false,
        }
    }

    /// Whether partial states of this vector transition combine
    /// (count(DISTINCT) would need the values themselves, not a count per
    /// partial group). An aggregate run through fmgr combines when its own
    /// combine function does, which the planner looks up.
    pub fn combines(self) -> bool {
        !matches!(
            self,
            Transition::CountDistinct(_)
                | Transition::SumDistinctInt
                | Transition::SumDistinctBigInt
                | Transition::AvgDistinctInt
                | Transition::Fmgr { .. }
        )
    }

    /// A stable integer for plan nodes (which hold lists of integers).
    pub fn code(self) -> i32 {
        let fin = |f: MomentsFinal| match f {
            MomentsFinal::Avg => 0,
            MomentsFinal::VarPop => 1,
            MomentsFinal::VarSamp => 2,
            MomentsFinal::StddevPop => 3,
            MomentsFinal::StddevSamp => 4,
        };
        match self {
            Transition::CountRows => 1,
            Transition::CountValues => 2,
            Transition::SumInt => 3,
            Transition::SumBigInt => 4,
            Transition::AvgInt => 5,
            Transition::SumNumeric => 14,
            Transition::AvgNumeric => 15,
            Transition::SumFloat4 => 6,
            Transition::SumFloat8 => 7,
            Transition::MinMaxInt { max } => 8 + max as i32,
            Transition::MinMaxFloat { max } => 10 + max as i32,
            Transition::MinMaxBytes { max } => 12 + max as i32,
            Transition::MinMaxNumeric { max } => 16 + max as i32,
            Transition::Moments { fin: f } => 20 + fin(f),
            Transition::CountDistinct(k) => 30 + k.code(),
            Transition::Fmgr { raises } => 60 + raises as i32,
            Transition::SumDistinctInt => 70,
            Transition::SumDistinctBigInt => 71,
            Transition::AvgDistinctInt => 72,
        }
    }

    /// The inverse of [`Transition::code`].
    pub fn from_code(code: i32) -> Option<Transition> {
        const FINS: [MomentsFinal; 5] = [
            MomentsFinal::Avg,
            MomentsFinal::VarPop,
            MomentsFinal::VarSamp,
            MomentsFinal::StddevPop,
            MomentsFinal::StddevSamp,
        ];
        Some(match code {
            1 => Transition::CountRows,
            2 => Transition::CountValues,
            3 => Transition::SumInt,
            4 => Transition::SumBigInt,
            5 => Transition::AvgInt,
            14 => Transition::SumNumeric,
            15 => Transition::AvgNumeric,
            6 => Transition::SumFloat4,
            7 => Transition::SumFloat8,
            8 | 9 => Transition::MinMaxInt { max: code == 9 },
            10 | 11 => Transition::MinMaxFloat { max: code == 11 },
            12 | 13 => Transition::MinMaxBytes { max: code == 13 },
            16 | 17 => Transition::MinMaxNumeric { max: code == 17 },
            20..=24 => Transition::Moments { fin: FINS[(code - 20) as usize] },
            30..=59 => Transition::CountDistinct(KeyKind::from_code(code - 30)?),
            60 | 61 => Transition::Fmgr { raises: code == 61 },
            70 => Transition::SumDistinctInt,
            71 => Transition::SumDistinctBigInt,
            72 => Transition::AvgDistinctInt,
            _ => return None,
        })
    }
}
