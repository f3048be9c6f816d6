//! The parts of definition bodies: fields, enum members, union branches, service methods.

use bebop::{Decode, Encode, Error, Reader, Sink, WireSize, field_size};

use crate::{DecoratorUsage, MethodType, TypeDescriptor};

/// `bebop.FieldDescriptor`: a struct field (`index` 0) or a message field (`index` = tag).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FieldDescriptor {
    /// `name(1)`.
    pub name: Option<String>,
    /// `documentation(2)`: the `///` comment before the field.
    pub documentation: Option<String>,
    /// `type(3)`: the field's type.
    pub r#type: Option<TypeDescriptor>,
    /// `index(4)`: 0 for struct fields, the wire tag 1..=255 for message fields.
    pub index: Option<u32>,
    /// `decorators(5)`.
    pub decorators: Option<Vec<DecoratorUsage>>,
}

impl FieldDescriptor {
    fn body_size(&self) -> usize {
        field_size(&self.name)
            + field_size(&self.documentation)
            + field_size(&self.r#type)
            + field_size(&self.index)
            + field_size(&self.decorators)
            + 1
    }
}

impl WireSize for FieldDescriptor {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for FieldDescriptor {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = FieldDescriptor::default();
            loop {
                match r.read_tag()? {
                    1 => m.name = Some(r.read()?),
                    2 => m.documentation = Some(r.read()?),
                    3 => m.r#type = Some(r.read()?),
                    4 => m.index = Some(r.read()?),
                    5 => m.decorators = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for FieldDescriptor {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.name {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.documentation {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.r#type {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.index {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.decorators {
                    s.write_field(5, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.EnumMemberDescriptor`: an enum member; `value` holds the bits of the base type
/// (sign-extended for signed bases).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EnumMemberDescriptor {
    /// `name(1)`.
    pub name: Option<String>,
    /// `documentation(2)`.
    pub documentation: Option<String>,
    /// `value(3)`: the value as `uint64`, to be reinterpreted per the enum's base type.
    pub value: Option<u64>,
    /// `decorators(4)`.
    pub decorators: Option<Vec<DecoratorUsage>>,
    /// `value_expr(5)`: the source expression (the reference does not write it).
    pub value_expr: Option<String>,
}

impl EnumMemberDescriptor {
    fn body_size(&self) -> usize {
        field_size(&self.name)
            + field_size(&self.documentation)
            + field_size(&self.value)
            + field_size(&self.decorators)
            + field_size(&self.value_expr)
            + 1
    }
}

impl WireSize for EnumMemberDescriptor {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for EnumMemberDescriptor {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = EnumMemberDescriptor::default();
            loop {
                match r.read_tag()? {
                    1 => m.name = Some(r.read()?),
                    2 => m.documentation = Some(r.read()?),
                    3 => m.value = Some(r.read()?),
                    4 => m.decorators = Some(r.read()?),
                    5 => m.value_expr = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for EnumMemberDescriptor {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.name {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.documentation {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.value {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.decorators {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.value_expr {
                    s.write_field(5, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.UnionBranchDescriptor`: a union branch, either inline (`inline_fqn`) or a type
/// reference (`type_ref_fqn` and `name`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct UnionBranchDescriptor {
    /// `discriminator(1)`: the wire discriminator, 1..=255.
    pub discriminator: Option<u8>,
    /// `documentation(2)`.
    pub documentation: Option<String>,
    /// `inline_fqn(3)`: the inline definition (in the union's `nested`).
    pub inline_fqn: Option<String>,
    /// `type_ref_fqn(4)`: the referenced type.
    pub type_ref_fqn: Option<String>,
    /// `name(5)`: the branch name of a type-reference branch.
    pub name: Option<String>,
    /// `decorators(6)`.
    pub decorators: Option<Vec<DecoratorUsage>>,
}

impl UnionBranchDescriptor {
    fn body_size(&self) -> usize {
        field_size(&self.discriminator)
            + field_size(&self.documentation)
            + field_size(&self.inline_fqn)
            + field_size(&self.type_ref_fqn)
            + field_size(&self.name)
            + field_size(&self.decorators)
            + 1
    }
}

impl WireSize for UnionBranchDescriptor {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for UnionBranchDescriptor {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = UnionBranchDescriptor::default();
            loop {
                match r.read_tag()? {
                    1 => m.discriminator = Some(r.read()?),
                    2 => m.documentation = Some(r.read()?),
                    3 => m.inline_fqn = Some(r.read()?),
                    4 => m.type_ref_fqn = Some(r.read()?),
                    5 => m.name = Some(r.read()?),
                    6 => m.decorators = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for UnionBranchDescriptor {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.discriminator {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.documentation {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.inline_fqn {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.type_ref_fqn {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.name {
                    s.write_field(5, v)?;
                }
                if let Some(v) = &self.decorators {
                    s.write_field(6, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.MethodDescriptor`: a service method.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MethodDescriptor {
    /// `name(1)`.
    pub name: Option<String>,
    /// `documentation(2)`.
    pub documentation: Option<String>,
    /// `request_type(3)`.
    pub request_type: Option<TypeDescriptor>,
    /// `response_type(4)`.
    pub response_type: Option<TypeDescriptor>,
    /// `method_type(5)`: the streaming mode.
    pub method_type: Option<MethodType>,
    /// `id(6)`: `bebop::method_id("/Service/Method")`.
    pub id: Option<u32>,
    /// `decorators(7)`.
    pub decorators: Option<Vec<DecoratorUsage>>,
}

impl MethodDescriptor {
    fn body_size(&self) -> usize {
        field_size(&self.name)
            + field_size(&self.documentation)
            + field_size(&self.request_type)
            + field_size(&self.response_type)
            + field_size(&self.method_type)
            + field_size(&self.id)
            + field_size(&self.decorators)
            + 1
    }
}

impl WireSize for MethodDescriptor {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for MethodDescriptor {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = MethodDescriptor::default();
            loop {
                match r.read_tag()? {
                    1 => m.name = Some(r.read()?),
                    2 => m.documentation = Some(r.read()?),
                    3 => m.request_type = Some(r.read()?),
                    4 => m.response_type = Some(r.read()?),
                    5 => m.method_type = Some(r.read()?),
                    6 => m.id = Some(r.read()?),
                    7 => m.decorators = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for MethodDescriptor {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.name {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.documentation {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.request_type {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.response_type {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.method_type {
                    s.write_field(5, v)?;
                }
                if let Some(v) = &self.id {
                    s.write_field(6, v)?;
                }
                if let Some(v) = &self.decorators {
                    s.write_field(7, v)?;
                }
                s.write(&[0])
            },
        )
    }
}
