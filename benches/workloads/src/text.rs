//! Realistic text for the text-bearing workloads.
//!
//! Real text is not pure ASCII: the reference harness's ChunkedText input (a public-domain
//! novel) has a few hundred multi-byte characters in 153 KB, mostly typographic punctuation.
//! A decoder that validates UTF-8 pays for them (an all-ASCII string takes a fast path), so a
//! suite of pure-ASCII stand-ins understates text costs. [`Texture`] rewrites ASCII text with
//! a seeded mix at that rate: about one character in 200 becomes a multi-byte one, mostly
//! 3-byte punctuation (em and en dashes, curly quotes, ellipses), some 2-byte accented
//! letters and some 4-byte emoji.
//!
//! Each multi-byte character replaces as many ASCII bytes as it is long, so every string keeps
//! its byte length, and with it every wire size and every span offset of the ASCII data. Line
//! breaks and Markdown headings (lines starting with `#` or `Chapter `) are never touched, so
//! the ChunkedText spans stay what the reference's splitter makes of the text.
//!
//! ```
//! use bebop_workloads::text::Texture;
//!
//! let mut texture = Texture::new(7);
//! let plain = "a".repeat(2000);
//! let mixed = texture.apply(&plain);
//! assert_eq!(mixed.len(), plain.len());
//! assert!(!mixed.is_ascii());
//! ```

use crate::data::Mt64;

/// Which text the workloads carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextMode {
    /// Pure ASCII: the suite's text before [`Texture`], the fast path of every validator.
    Ascii,
    /// ASCII with multi-byte characters at the reference input's rate (the default).
    Mixed,
}

/// 3-byte punctuation: most of the reference input's multi-byte characters.
const THREE_BYTE: [char; 6] = [
    '\u{2014}', '\u{2013}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2026}',
];
/// 2-byte accented letters.
const TWO_BYTE: [char; 7] = ['é', 'è', 'ü', 'ö', 'ñ', 'ç', 'à'];
/// 4-byte emoji.
const FOUR_BYTE: [char; 4] = ['\u{1F600}', '\u{1F642}', '\u{1F680}', '\u{1F44D}'];

/// Fewest and most characters between two multi-byte characters: one in 200 on average.
const GAP: (i64, i64) = (100, 300);

/// Rewrites ASCII text with multi-byte characters at a steady, seeded rate. One `Texture`
/// carries its count across every string it is given, so short strings get their share of
/// the rate too (most get none, some get one).
pub struct Texture {
    rng: Mt64,
    /// Characters to pass before the next multi-byte one.
    countdown: i64,
}

impl Texture {
    /// A texture whose choices follow from `seed`.
    pub fn new(seed: u64) -> Texture {
        let mut rng = Mt64::new(seed);
        let countdown = rng.int_in(0, GAP.1);
        Texture { rng, countdown }
    }

    /// `text` with some characters replaced by multi-byte ones, of the same byte length.
    /// Text that is already not pure ASCII is returned unchanged.
    pub fn apply(&mut self, text: &str) -> String {
        if !text.is_ascii() {
            return text.to_owned();
        }
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        let mut line_start = true;
        let mut protected = false;
        while at < bytes.len() {
            let b = bytes[at];
            if line_start {
                let rest = &text[at..];
                protected = rest.starts_with('#') || rest.starts_with("Chapter ");
            }
            if !protected && self.countdown <= 0 {
                let c = self.pick();
                let width = c.len_utf8();
                let run = bytes.get(at..at + width);
                if run.is_some_and(|r| r.iter().all(|&x| x != b'\n' && x != b'#')) {
                    out.push(c);
                    at += width;
                    line_start = false;
                    self.countdown = self.rng.int_in(GAP.0, GAP.1);
                    continue;
                }
            }
            out.push(char::from(b));
            at += 1;
            self.countdown -= 1;
            line_start = b == b'\n';
        }
        out
    }

    /// One multi-byte character: 80% 3-byte punctuation, 15% 2-byte letters, 5% emoji.
    fn pick(&mut self) -> char {
        let roll = self.rng.int_in(0, 99);
        let from = |set: &[char], rng: &mut Mt64| set[rng.int_in(0, set.len() as i64 - 1) as usize];
        match roll {
            0..80 => from(&THREE_BYTE, &mut self.rng),
            80..95 => from(&TWO_BYTE, &mut self.rng),
            _ => from(&FOUR_BYTE, &mut self.rng),
        }
    }
}

/// How many characters of `text` are not ASCII.
pub fn non_ascii_chars(text: &str) -> usize {
    text.chars().filter(|c| !c.is_ascii()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_about_one_in_two_hundred_and_lengths_stay() {
        let mut texture = Texture::new(42);
        let plain: String = (0..100_000u32)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let mixed = texture.apply(&plain);
        assert_eq!(mixed.len(), plain.len());
        let chars = mixed.chars().count();
        let rate = non_ascii_chars(&mixed) as f64 / chars as f64;
        assert!((0.004..0.006).contains(&rate), "{rate}");
        let widths = |w: usize| mixed.chars().filter(|c| c.len_utf8() == w).count();
        let (two, three, four) = (widths(2), widths(3), widths(4));
        assert!(
            three > two && two > four && four > 0,
            "{two} {three} {four}"
        );
    }

    #[test]
    fn headings_and_line_breaks_are_kept() {
        let mut texture = Texture::new(1);
        let line = "x".repeat(300);
        let text = format!("## Chapter 1\n{line}\n# {line}\nChapter 2 {line}\n\n{line}");
        let mixed = texture.apply(&text);
        assert_eq!(mixed.len(), text.len());
        let (a, b): (Vec<_>, Vec<_>) = (text.lines().collect(), mixed.lines().collect());
        assert_eq!(a.len(), b.len());
        for (plain, out) in a.iter().zip(&b) {
            if plain.starts_with('#') || plain.starts_with("Chapter ") {
                assert_eq!(plain, out);
            }
        }
        assert!(!b[1].is_ascii() && !b[5].is_ascii());
    }

    #[test]
    fn text_that_is_not_ascii_is_left_alone() {
        let mut texture = Texture::new(3);
        let text = format!("{}é", "y".repeat(1000));
        assert_eq!(texture.apply(&text), text);
    }
}
