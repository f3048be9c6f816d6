//! `DefinitionDescriptor`: a named definition of any kind.

use bebop::{Decode, Encode, Error, Reader, Sink, WireSize, field_size};

use crate::{
    ConstDef, DecoratorDef, DecoratorUsage, DefinitionKind, EnumDef, MessageDef, ServiceDef,
    StructDef, UnionDef, Visibility,
};

/// `bebop.DefinitionDescriptor`: a named definition. `kind` says which body field is set;
/// [`body`](Self::body) returns it as a [`DefinitionBody`](crate::DefinitionBody).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DefinitionDescriptor {
    /// `kind(1)`: which body is set.
    pub kind: Option<DefinitionKind>,
    /// `name(2)`: the simple name.
    pub name: Option<String>,
    /// `fqn(3)`: the fully qualified name (package, parents, name).
    pub fqn: Option<String>,
    /// `documentation(4)`: the `///` comment before the definition.
    pub documentation: Option<String>,
    /// `visibility(5)`.
    pub visibility: Option<Visibility>,
    /// `decorators(6)`.
    pub decorators: Option<Vec<DecoratorUsage>>,
    /// `nested(7)`: definitions declared inside this one, inline union branches included.
    pub nested: Option<Vec<DefinitionDescriptor>>,
    /// `enum_def(8)`: the body when `kind == ENUM`.
    pub enum_def: Option<EnumDef>,
    /// `struct_def(9)`: the body when `kind == STRUCT`.
    pub struct_def: Option<StructDef>,
    /// `message_def(10)`: the body when `kind == MESSAGE`.
    pub message_def: Option<MessageDef>,
    /// `union_def(11)`: the body when `kind == UNION`.
    pub union_def: Option<UnionDef>,
    /// `service_def(12)`: the body when `kind == SERVICE`.
    pub service_def: Option<ServiceDef>,
    /// `const_def(13)`: the body when `kind == CONST`.
    pub const_def: Option<ConstDef>,
    /// `decorator_def(14)`: the body when `kind == DECORATOR`.
    pub decorator_def: Option<DecoratorDef>,
}

impl DefinitionDescriptor {
    fn body_size(&self) -> usize {
        field_size(&self.kind)
            + field_size(&self.name)
            + field_size(&self.fqn)
            + field_size(&self.documentation)
            + field_size(&self.visibility)
            + field_size(&self.decorators)
            + field_size(&self.nested)
            + field_size(&self.enum_def)
            + field_size(&self.struct_def)
            + field_size(&self.message_def)
            + field_size(&self.union_def)
            + field_size(&self.service_def)
            + field_size(&self.const_def)
            + field_size(&self.decorator_def)
            + 1
    }
}

impl WireSize for DefinitionDescriptor {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for DefinitionDescriptor {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = DefinitionDescriptor::default();
            loop {
                match r.read_tag()? {
                    1 => m.kind = Some(r.read()?),
                    2 => m.name = Some(r.read()?),
                    3 => m.fqn = Some(r.read()?),
                    4 => m.documentation = Some(r.read()?),
                    5 => m.visibility = Some(r.read()?),
                    6 => m.decorators = Some(r.read()?),
                    7 => m.nested = Some(r.read()?),
                    8 => m.enum_def = Some(r.read()?),
                    9 => m.struct_def = Some(r.read()?),
                    10 => m.message_def = Some(r.read()?),
                    11 => m.union_def = Some(r.read()?),
                    12 => m.service_def = Some(r.read()?),
                    13 => m.const_def = Some(r.read()?),
                    14 => m.decorator_def = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for DefinitionDescriptor {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.kind {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.name {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.fqn {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.documentation {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.visibility {
                    s.write_field(5, v)?;
                }
                if let Some(v) = &self.decorators {
                    s.write_field(6, v)?;
                }
                if let Some(v) = &self.nested {
                    s.write_field(7, v)?;
                }
                if let Some(v) = &self.enum_def {
                    s.write_field(8, v)?;
                }
                if let Some(v) = &self.struct_def {
                    s.write_field(9, v)?;
                }
                if let Some(v) = &self.message_def {
                    s.write_field(10, v)?;
                }
                if let Some(v) = &self.union_def {
                    s.write_field(11, v)?;
                }
                if let Some(v) = &self.service_def {
                    s.write_field(12, v)?;
                }
                if let Some(v) = &self.const_def {
                    s.write_field(13, v)?;
                }
                if let Some(v) = &self.decorator_def {
                    s.write_field(14, v)?;
                }
                s.write(&[0])
            },
        )
    }
}
