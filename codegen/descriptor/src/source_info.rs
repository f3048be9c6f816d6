//! Source code info: positions and comments of descriptor elements.

use bebop::{Decode, Encode, Error, Reader, Sink, WireSize, field_size};

/// `bebop.Location`: where one descriptor element is in the source, and its comments.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Location {
    /// `path(1)`: (field tag, index) pairs leading to the element, e.g. `[5, 0, 1, 2]`.
    pub path: Option<Vec<i32>>,
    /// `span(2)`: `[start_line, start_col, end_line, end_col]`, 1-based.
    pub span: Option<[i32; 4]>,
    /// `leading_comments(3)`.
    pub leading_comments: Option<String>,
    /// `trailing_comments(4)`.
    pub trailing_comments: Option<String>,
    /// `detached_comments(5)`.
    pub detached_comments: Option<Vec<String>>,
}

impl Location {
    fn body_size(&self) -> usize {
        field_size(&self.path)
            + field_size(&self.span)
            + field_size(&self.leading_comments)
            + field_size(&self.trailing_comments)
            + field_size(&self.detached_comments)
            + 1
    }
}

impl WireSize for Location {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for Location {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = Location::default();
            loop {
                match r.read_tag()? {
                    1 => m.path = Some(r.read()?),
                    2 => m.span = Some(r.read()?),
                    3 => m.leading_comments = Some(r.read()?),
                    4 => m.trailing_comments = Some(r.read()?),
                    5 => m.detached_comments = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for Location {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.path {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.span {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.leading_comments {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.trailing_comments {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.detached_comments {
                    s.write_field(5, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.SourceCodeInfo`: the locations of a schema's elements.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SourceCodeInfo {
    /// `locations(1)`.
    pub locations: Option<Vec<Location>>,
}

impl SourceCodeInfo {
    fn body_size(&self) -> usize {
        field_size(&self.locations) + 1
    }
}

impl WireSize for SourceCodeInfo {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for SourceCodeInfo {
    #[allow(
        clippy::while_let_loop,
        reason = "the same loop as every other message, for a single field"
    )]
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = SourceCodeInfo::default();
            loop {
                match r.read_tag()? {
                    1 => m.locations = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for SourceCodeInfo {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.locations {
                    s.write_field(1, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_code_info_round_trips() {
        let info = SourceCodeInfo {
            locations: Some(vec![
                Location {
                    path: Some(vec![5, 0, 1, 2]),
                    span: Some([3, 5, 3, 20]),
                    leading_comments: Some(" the x field".into()),
                    trailing_comments: None,
                    detached_comments: Some(vec!["a".into(), String::new()]),
                },
                Location::default(),
            ]),
        };
        let bytes = bebop::encode_to_vec(&info).unwrap();
        assert_eq!(bytes.len(), info.encoded_size());
        assert_eq!(SourceCodeInfo::from_bytes(&bytes).unwrap(), info);
        // The empty location is `01000000 00` at the very end, before the outer end marker.
        assert_eq!(&bytes[bytes.len() - 6..], &[1, 0, 0, 0, 0, 0]);
    }
}
