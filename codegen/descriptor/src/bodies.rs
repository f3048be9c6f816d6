//! Definition bodies: `EnumDef`, `StructDef`, `MessageDef`, `UnionDef`, `ServiceDef`,
//! `ConstDef`.

use bebop::{Decode, Encode, Error, Reader, Sink, WireSize, field_size};

use crate::{
    EnumMemberDescriptor, FieldDescriptor, LiteralValue, MethodDescriptor, TypeDescriptor,
    TypeKind, UnionBranchDescriptor,
};

/// `bebop.EnumDef`: the body of an enum.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EnumDef {
    /// `base_type(1)`: the integer base type (`UINT32` when none is declared).
    pub base_type: Option<TypeKind>,
    /// `members(2)`, in source order.
    pub members: Option<Vec<EnumMemberDescriptor>>,
    /// `is_flags(3)`: true for `@flags` enums.
    pub is_flags: Option<bool>,
}

impl EnumDef {
    fn body_size(&self) -> usize {
        field_size(&self.base_type) + field_size(&self.members) + field_size(&self.is_flags) + 1
    }
}

impl WireSize for EnumDef {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for EnumDef {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = EnumDef::default();
            loop {
                match r.read_tag()? {
                    1 => m.base_type = Some(r.read()?),
                    2 => m.members = Some(r.read()?),
                    3 => m.is_flags = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for EnumDef {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.base_type {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.members {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.is_flags {
                    s.write_field(3, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.StructDef`: the body of a struct.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StructDef {
    /// `fields(1)`, in source order.
    pub fields: Option<Vec<FieldDescriptor>>,
    /// `is_mutable(2)`: declared `mut`.
    pub is_mutable: Option<bool>,
    /// `fixed_size(3)`: the wire size when every field is fixed-size, else 0.
    pub fixed_size: Option<u32>,
}

impl StructDef {
    fn body_size(&self) -> usize {
        field_size(&self.fields) + field_size(&self.is_mutable) + field_size(&self.fixed_size) + 1
    }
}

impl WireSize for StructDef {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for StructDef {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = StructDef::default();
            loop {
                match r.read_tag()? {
                    1 => m.fields = Some(r.read()?),
                    2 => m.is_mutable = Some(r.read()?),
                    3 => m.fixed_size = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for StructDef {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.fields {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.is_mutable {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.fixed_size {
                    s.write_field(3, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.MessageDef`: the body of a message.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MessageDef {
    /// `fields(1)`, in source order.
    pub fields: Option<Vec<FieldDescriptor>>,
}

impl MessageDef {
    fn body_size(&self) -> usize {
        field_size(&self.fields) + 1
    }
}

impl WireSize for MessageDef {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for MessageDef {
    #[allow(
        clippy::while_let_loop,
        reason = "the same loop as every other message, for a single field"
    )]
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = MessageDef::default();
            loop {
                match r.read_tag()? {
                    1 => m.fields = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for MessageDef {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.fields {
                    s.write_field(1, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.UnionDef`: the body of a union.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct UnionDef {
    /// `branches(1)`, in source order.
    pub branches: Option<Vec<UnionBranchDescriptor>>,
}

impl UnionDef {
    fn body_size(&self) -> usize {
        field_size(&self.branches) + 1
    }
}

impl WireSize for UnionDef {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for UnionDef {
    #[allow(
        clippy::while_let_loop,
        reason = "the same loop as every other message, for a single field"
    )]
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = UnionDef::default();
            loop {
                match r.read_tag()? {
                    1 => m.branches = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for UnionDef {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.branches {
                    s.write_field(1, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.ServiceDef`: the body of a service.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ServiceDef {
    /// `methods(1)`, in source order.
    pub methods: Option<Vec<MethodDescriptor>>,
}

impl ServiceDef {
    fn body_size(&self) -> usize {
        field_size(&self.methods) + 1
    }
}

impl WireSize for ServiceDef {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for ServiceDef {
    #[allow(
        clippy::while_let_loop,
        reason = "the same loop as every other message, for a single field"
    )]
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = ServiceDef::default();
            loop {
                match r.read_tag()? {
                    1 => m.methods = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for ServiceDef {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.methods {
                    s.write_field(1, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.ConstDef`: the body of a const.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConstDef {
    /// `type(1)`.
    pub r#type: Option<TypeDescriptor>,
    /// `value(2)`.
    pub value: Option<LiteralValue>,
}

impl ConstDef {
    fn body_size(&self) -> usize {
        field_size(&self.r#type) + field_size(&self.value) + 1
    }
}

impl WireSize for ConstDef {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for ConstDef {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = ConstDef::default();
            loop {
                match r.read_tag()? {
                    1 => m.r#type = Some(r.read()?),
                    2 => m.value = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for ConstDef {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.r#type {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.value {
                    s.write_field(2, v)?;
                }
                s.write(&[0])
            },
        )
    }
}
