//! `SchemaDescriptor` and `DescriptorSet`: compiled `.bop` files.

use bebop::{Decode, Encode, Error, Reader, Sink, WireSize, field_size};

use crate::{DefinitionDescriptor, Edition, SourceCodeInfo};

/// `bebop.SchemaDescriptor`: one compiled `.bop` file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SchemaDescriptor {
    /// `path(1)`: the file path as given to the compiler.
    pub path: Option<String>,
    /// `package(2)`: the package, absent when none is declared.
    pub package: Option<String>,
    /// `edition(3)`.
    pub edition: Option<Edition>,
    /// `imports(4)`: import paths in source order.
    pub imports: Option<Vec<String>>,
    /// `definitions(5)`: the top-level definitions.
    pub definitions: Option<Vec<DefinitionDescriptor>>,
    /// `source_code_info(6)`: present when requested.
    pub source_code_info: Option<SourceCodeInfo>,
}

impl SchemaDescriptor {
    fn body_size(&self) -> usize {
        field_size(&self.path)
            + field_size(&self.package)
            + field_size(&self.edition)
            + field_size(&self.imports)
            + field_size(&self.definitions)
            + field_size(&self.source_code_info)
            + 1
    }
}

impl WireSize for SchemaDescriptor {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for SchemaDescriptor {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = SchemaDescriptor::default();
            loop {
                match r.read_tag()? {
                    1 => m.path = Some(r.read()?),
                    2 => m.package = Some(r.read()?),
                    3 => m.edition = Some(r.read()?),
                    4 => m.imports = Some(r.read()?),
                    5 => m.definitions = Some(r.read()?),
                    6 => m.source_code_info = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for SchemaDescriptor {
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
                if let Some(v) = &self.package {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.edition {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.imports {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.definitions {
                    s.write_field(5, v)?;
                }
                if let Some(v) = &self.source_code_info {
                    s.write_field(6, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.DescriptorSet`: the root of a compiled descriptor, what `--desc_out` writes.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DescriptorSet {
    /// `schemas(1)`.
    pub schemas: Option<Vec<SchemaDescriptor>>,
}

impl DescriptorSet {
    fn body_size(&self) -> usize {
        field_size(&self.schemas) + 1
    }
}

impl WireSize for DescriptorSet {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for DescriptorSet {
    #[allow(
        clippy::while_let_loop,
        reason = "the same loop as every other message, for a single field"
    )]
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = DescriptorSet::default();
            loop {
                match r.read_tag()? {
                    1 => m.schemas = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for DescriptorSet {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.schemas {
                    s.write_field(1, v)?;
                }
                s.write(&[0])
            },
        )
    }
}
