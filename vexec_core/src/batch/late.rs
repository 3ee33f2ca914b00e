//! Which columns a scan reads for every row of a batch ("early") and which
//! only for some rows ("late"): the rows its kernel quals keep, or the rows
//! a parent join found a match for (deferred columns).
//!
//! Deforming walks a tuple's attributes up to the last one it needs, so a
//! column before the last early one costs only a store: it is read early
//! too (a second walk for some rows would cost more than that).

/// Mark early every input before the last early one. `attnums` are the
/// inputs' attribute numbers.
pub fn read_walked_early(attnums: &[i16], early: &mut [bool]) {
    let last_early = attnums.iter().zip(early.iter()).filter(|(_, &e)| e).map(|(&a, _)| a).max();
    if let Some(last_early) = last_early {
        for (&a, e) in attnums.iter().zip(early.iter_mut()) {
            *e |= a < last_early;
        }
    }
}

/// What a scan's output column is, for deferral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetRead {
    /// The input column of this index, as read.
    Input(usize),
    /// Computed by a kernel from these inputs.
    Computed(Vec<usize>),
}

/// The deferral a parent asked for (`needed[t]`: target `t` is read for
/// every row): which targets are deferred and which inputs are then read
/// early (all but the deferred targets' ones). None when nothing can be
/// deferred. A target is deferred when it is an input no qual or other
/// target reads and that comes after every input that is read early.
pub fn deferral(
    attnums: &[i16],
    qual_inputs: &[usize],
    targets: &[TargetRead],
    needed: &[bool],
) -> Option<(Vec<bool>, Vec<bool>)> {
    if needed.len() != targets.len() {
        return None;
    }
    let mut early = vec![false; attnums.len()];
    qual_inputs.iter().for_each(|&i| early[i] = true);
    let mut candidates = Vec::new();
    for (t, target) in targets.iter().enumerate() {
        match target {
            TargetRead::Input(i) if !needed[t] => candidates.push((t, *i)),
            TargetRead::Input(i) => early[*i] = true,
            TargetRead::Computed(inputs) => inputs.iter().for_each(|&i| early[i] = true),
        }
    }
    read_walked_early(attnums, &mut early);
    let mut deferred = vec![false; targets.len()];
    let mut late = vec![false; attnums.len()];
    for (t, i) in candidates.into_iter().filter(|&(_, i)| !early[i]) {
        deferred[t] = true;
        late[i] = true;
    }
    late.contains(&true).then(|| (deferred, late.iter().map(|&l| !l).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use TargetRead::*;

    #[test]
    fn columns_before_an_early_one_are_read_early() {
        let mut early = vec![false, false, true, false];
        read_walked_early(&[1, 3, 5, 9], &mut early);
        assert_eq!(early, [true, true, true, false]);
        let mut none = vec![false; 3];
        read_walked_early(&[1, 2, 3], &mut none);
        assert_eq!(none, [false; 3]);
    }

    #[test]
    fn a_join_key_early_the_later_columns_deferred() {
        // inputs: attnums 1 (date key of the parent), 3 (key), 16 (price), 20 (qty)
        let attnums = [1, 3, 16, 20];
        let targets = [Input(0), Input(1), Input(2), Input(3)];
        let (deferred, early) = deferral(&attnums, &[], &targets, &[false, true, false, false]).unwrap();
        // attnum 1 is before the key: read with it.
        assert_eq!(deferred, [false, false, true, true]);
        assert_eq!(early, [true, true, false, false]);
    }

    #[test]
    fn columns_a_qual_or_a_kernel_reads_stay_early() {
        let attnums = [1, 2, 3, 4];
        let targets = [Input(0), Input(2), Computed(vec![3]), Input(1)];
        // the qual reads input 1 (attnum 2); target 2 computes from attnum 4
        assert_eq!(deferral(&attnums, &[1], &targets, &[true, false, false, false]), None);
        let targets = [Input(0), Input(3), Input(3), Input(2)];
        let (deferred, early) = deferral(&attnums, &[], &targets, &[true, false, false, true]).unwrap();
        // attnum 4 is read by two deferred targets; attnum 3 by a needed one
        assert_eq!(deferred, [false, true, true, false]);
        assert_eq!(early, [true, true, true, false]);
        // the same input needed by one target and deferrable for another: early
        let targets = [Input(0), Input(3), Input(3)];
        assert_eq!(deferral(&attnums, &[], &targets, &[true, true, false]), None);
    }

    #[test]
    fn a_key_after_every_column_leaves_nothing_to_defer() {
        let attnums = [1, 2, 5];
        let targets = [Input(0), Input(1), Input(2)];
        assert_eq!(deferral(&attnums, &[], &targets, &[false, false, true]), None);
        assert_eq!(deferral(&attnums, &[], &targets, &[false, false]), None, "mismatched lengths");
    }
}
