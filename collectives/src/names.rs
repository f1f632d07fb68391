//! Names a user types and how near a mistyped one is to each: the edit distance the parsers of
//! collectives and modes use for their "did you mean" hints.

/// How far apart two names are: the edit distance (insertions, deletions, substitutions of
/// one character) after lower-casing both and dropping `_` and `-`, so `alltoall` is 0 away
/// from `all_to_all` and `allreduc` 1 away from `allreduce`.
pub fn name_distance(a: &str, b: &str) -> usize {
    let norm =
        |s: &str| -> Vec<char> { s.chars().filter(|c| !matches!(c, '_' | '-')).flat_map(char::to_lowercase).collect() };
    let (a, b) = (norm(a), norm(b));
    // One row of the dynamic-programming table at a time: row[j] = distance(a[..i], b[..j]).
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = (diag + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = here;
        }
    }
    row[b.len()]
}

/// The candidate a mistyped `input` most likely meant, for a "did you mean" hint: the nearest by
/// [`name_distance`] (the first of equals), if it is at most a third of the input's length
/// away (and at least one edit is allowed), else `None`.
///
/// ```
/// assert_eq!(collectives::did_you_mean("alltoall", ["allreduce", "all_to_all", "all_to_all_v"]), Some("all_to_all"));
/// assert_eq!(collectives::did_you_mean("a2a4", ["a2a3", "a5"]), Some("a2a3"));
/// assert_eq!(collectives::did_you_mean("nope", ["a2a3", "a5"]), None);
/// ```
pub fn did_you_mean<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (input.chars().filter(|c| !matches!(c, '_' | '-')).count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = name_distance(input, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `did you mean `x`? ` when one name is close to `input`, else nothing.
pub(crate) fn suggestion(input: &str, names: &[&str]) -> String {
    did_you_mean(input, names.iter().copied()).map(|n| format!("did you mean `{n}`? ")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_distance_ignores_case_and_separators() {
        assert_eq!(name_distance("alltoall", "all_to_all"), 0);
        assert_eq!(name_distance("aiv_mesh", "AIV-MESH"), 0);
        assert_eq!(name_distance("allreduc", "allreduce"), 1);
        assert_eq!(name_distance("a2a4", "a2a3"), 1);
        assert_eq!(name_distance("", "abc"), 3);
        assert_eq!(name_distance("kitten", "sitting"), 3);
        assert_eq!(did_you_mean("alltoall", ["all_to_all_v", "all_to_all"]), Some("all_to_all"));
        assert_eq!(did_you_mean("rign", ["mesh", "ring"]), None, "two edits are too many for four letters");
        assert_eq!(did_you_mean("x", ["y", "z"]), Some("y"), "one edit is always allowed; ties go to the first");
    }
}
