//! Unified diffs (`bebopc fmt --check`): what formatting would change in a file, in the
//! format `patch` and `git apply` read (`patch -p0 < fmt.diff` applies it).
//!
//! Lines are matched by a longest common subsequence over the lines between the common
//! prefix and suffix. When that middle part is too large for the table (more than
//! [`MAX_CELLS`] line pairs), it is shown as removed and added whole: still a correct diff,
//! only not a minimal one.

/// The most line pairs compared to find a minimal diff.
pub const MAX_CELLS: usize = 4_000_000;

/// Lines of context around each change.
const CONTEXT: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// The same line: `old` index, `new` index.
    Same(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// The unified diff from `old` to `new` (empty when they are equal), naming the file `path`.
pub fn unified(old: &str, new: &str, path: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = edit_script(&a, &b);
    let mut out = format!("--- {path}\n+++ {path}\t(formatted)\n");
    // Indices into `ops` of the changes, grouped into hunks with their context.
    let changes: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Same(..)))
        .map(|(i, _)| i)
        .collect();
    let mut k = 0;
    while k < changes.len() {
        let first = changes[k];
        let mut last = first;
        while k + 1 < changes.len() && changes[k + 1] - last <= 2 * CONTEXT + 1 {
            k += 1;
            last = changes[k];
        }
        k += 1;
        let start = first.saturating_sub(CONTEXT);
        let end = (last + CONTEXT + 1).min(ops.len());
        let old_before = ops[..start]
            .iter()
            .filter(|op| !matches!(op, Op::Insert(_)))
            .count();
        let new_before = ops[..start]
            .iter()
            .filter(|op| !matches!(op, Op::Delete(_)))
            .count();
        hunk(&mut out, &ops[start..end], old_before, new_before, &a, &b);
    }
    out
}

/// Writes one hunk: `ops`, which start after `old_before` lines of the old file and
/// `new_before` of the new one.
fn hunk(
    out: &mut String,
    ops: &[Op],
    old_before: usize,
    new_before: usize,
    a: &[&str],
    b: &[&str],
) {
    let old_len = ops.iter().filter(|op| !matches!(op, Op::Insert(_))).count();
    let new_len = ops.iter().filter(|op| !matches!(op, Op::Delete(_))).count();
    // A side with no line in the hunk is numbered by the line before it.
    let first = |before: usize, len: usize| if len == 0 { before } else { before + 1 };
    out.push_str(&format!(
        "@@ -{} +{} @@\n",
        range(first(old_before, old_len), old_len),
        range(first(new_before, new_len), new_len)
    ));
    for op in ops {
        let (mark, line) = match *op {
            Op::Same(i, _) => (' ', a.get(i)),
            Op::Delete(i) => ('-', a.get(i)),
            Op::Insert(j) => ('+', b.get(j)),
        };
        let line = line.copied().unwrap_or("");
        out.push(mark);
        match line.strip_suffix('\n') {
            Some(text) => {
                out.push_str(text);
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
}

fn range(first: usize, len: usize) -> String {
    if len == 1 {
        first.to_string()
    } else {
        format!("{first},{len}")
    }
}

/// The edit script from `a` to `b`: a longest common subsequence of the lines between the
/// common prefix and suffix.
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<Op> = (0..prefix).map(|i| Op::Same(i, i)).collect();
    let (n, m) = (a_mid.len(), b_mid.len());
    if n.saturating_mul(m) <= MAX_CELLS && n > 0 && m > 0 {
        // lcs[i * (m + 1) + j]: the length of a longest common subsequence of a_mid[i..] and
        // b_mid[j..].
        let w = m + 1;
        let mut lcs = vec![0u32; (n + 1) * w];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * w + j] = if a_mid[i] == b_mid[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && a_mid[i] == b_mid[j] {
                ops.push(Op::Same(prefix + i, prefix + j));
                i += 1;
                j += 1;
            } else if j >= m || (i < n && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                ops.push(Op::Delete(prefix + i));
                i += 1;
            } else {
                ops.push(Op::Insert(prefix + j));
                j += 1;
            }
        }
    } else {
        ops.extend((0..n).map(|i| Op::Delete(prefix + i)));
        ops.extend((0..m).map(|j| Op::Insert(prefix + j)));
    }
    ops.extend((0..suffix).map(|k| Op::Same(a.len() - suffix + k, b.len() - suffix + k)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("a\n", "a\n", "x.bop"), "");
    }

    #[test]
    fn hunks_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
        let new = "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n";
        assert_eq!(
            unified(old, new, "x.bop"),
            "--- x.bop\n+++ x.bop\t(formatted)\n\
             @@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n\
             @@ -10,3 +10,4 @@\n 10\n 11\n 12\n+13\n"
        );
    }

    #[test]
    fn insertions_deletions_and_missing_newlines() {
        assert_eq!(
            unified("", "a\n", "x"),
            "--- x\n+++ x\t(formatted)\n@@ -0,0 +1 @@\n+a\n"
        );
        assert_eq!(
            unified("a\nb\n", "b\n", "x"),
            "--- x\n+++ x\t(formatted)\n@@ -1,2 +1 @@\n-a\n b\n"
        );
        assert_eq!(
            unified("a\n}", "a\n}\n", "x"),
            "--- x\n+++ x\t(formatted)\n@@ -1,2 +1,2 @@\n a\n-}\n\\ No newline at end of file\n+}\n"
        );
    }

    #[test]
    fn large_middles_are_replaced_whole() {
        let old: String = (0..3000).map(|i| format!("{i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("{}\n", i * 7 % 3000)).collect();
        let d = unified(&old, &new, "x");
        // The first line is the same; the 2999 others are too many to compare pairwise.
        assert!(
            d.contains("\n@@ -1,3000 +1,3000 @@\n 0\n-1\n"),
            "{}",
            &d[..100]
        );
        let removed = d
            .lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"));
        assert_eq!(removed.count(), 2999);
    }
}
