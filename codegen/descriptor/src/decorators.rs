//! Decorator usages and decorator definitions.

use bebop::{Decode, Encode, Error, Reader, Sink, WireSize, field_size};

use crate::{DecoratorTarget, LiteralValue, TypeKind, map_entries};

/// `bebop.DecoratorArg` (a struct): one named or positional argument of a decorator usage.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DecoratorArg {
    /// `name`: the parameter name, empty for a positional argument.
    pub name: String,
    /// `value`: the argument's value.
    pub value: LiteralValue,
}

impl WireSize for DecoratorArg {
    const MIN_SIZE: usize = <String as WireSize>::MIN_SIZE + <LiteralValue as WireSize>::MIN_SIZE;
}

impl<'a> Decode<'a> for DecoratorArg {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(DecoratorArg {
            name: r.read()?,
            value: r.read()?,
        })
    }
}

impl Encode for DecoratorArg {
    fn encoded_size(&self) -> usize {
        self.name.encoded_size() + self.value.encoded_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.name.encode(s)?;
        self.value.encode(s)
    }
}

/// `bebop.DecoratorUsage`: a decorator applied to a definition, field, member, branch or
/// method.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DecoratorUsage {
    /// `fqn(1)`: the decorator's name (the reference writes the bare name, e.g. `flags`).
    pub fqn: Option<String>,
    /// `args(2)`: the arguments, in source order.
    pub args: Option<Vec<DecoratorArg>>,
    /// `export_data(3)`: the results of the decorator's export block, in wire order
    /// (`map[string, LiteralValue]`).
    pub export_data: Option<Vec<(String, LiteralValue)>>,
}

impl DecoratorUsage {
    /// The value exported under `key` (the last one when the key repeats).
    pub fn export(&self, key: &str) -> Option<&LiteralValue> {
        self.export_data
            .as_deref()?
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    fn body_size(&self) -> usize {
        field_size(&self.fqn)
            + field_size(&self.args)
            + self
                .export_data
                .as_ref()
                .map_or(0, |v| 1 + map_entries::encoded_size(v))
            + 1
    }
}

impl WireSize for DecoratorUsage {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for DecoratorUsage {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = DecoratorUsage::default();
            loop {
                match r.read_tag()? {
                    1 => m.fqn = Some(r.read()?),
                    2 => m.args = Some(r.read()?),
                    3 => m.export_data = Some(map_entries::decode(r)?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for DecoratorUsage {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.fqn {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.args {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.export_data {
                    s.write(&[3])?;
                    map_entries::encode(v, s)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.DecoratorParamDef`: one parameter a decorator definition accepts.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DecoratorParamDef {
    /// `name(1)`.
    pub name: Option<String>,
    /// `description(2)`: the `///` comment before the parameter.
    pub description: Option<String>,
    /// `type(3)`: a scalar kind.
    pub r#type: Option<TypeKind>,
    /// `required(4)`: `!` (true) or `?` (false).
    pub required: Option<bool>,
    /// `default_value(5)`: the default of an optional parameter.
    pub default_value: Option<LiteralValue>,
    /// `allowed_values(6)`: the `in [...]` constraint.
    pub allowed_values: Option<Vec<LiteralValue>>,
}

impl DecoratorParamDef {
    fn body_size(&self) -> usize {
        field_size(&self.name)
            + field_size(&self.description)
            + field_size(&self.r#type)
            + field_size(&self.required)
            + field_size(&self.default_value)
            + field_size(&self.allowed_values)
            + 1
    }
}

impl WireSize for DecoratorParamDef {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for DecoratorParamDef {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = DecoratorParamDef::default();
            loop {
                match r.read_tag()? {
                    1 => m.name = Some(r.read()?),
                    2 => m.description = Some(r.read()?),
                    3 => m.r#type = Some(r.read()?),
                    4 => m.required = Some(r.read()?),
                    5 => m.default_value = Some(r.read()?),
                    6 => m.allowed_values = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for DecoratorParamDef {
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
                if let Some(v) = &self.description {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.r#type {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.required {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.default_value {
                    s.write_field(5, v)?;
                }
                if let Some(v) = &self.allowed_values {
                    s.write_field(6, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.DecoratorDef`: the body of a `#decorator(name) { ... }` definition.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DecoratorDef {
    /// `targets(1)`: the element kinds it may decorate.
    pub targets: Option<DecoratorTarget>,
    /// `allow_multiple(2)`: whether it may appear more than once on one target.
    pub allow_multiple: Option<bool>,
    /// `params(3)`: the parameters it accepts.
    pub params: Option<Vec<DecoratorParamDef>>,
    /// `validate_source(4)`: the Lua source of its validate block.
    pub validate_source: Option<String>,
    /// `export_source(5)`: the Lua source of its export block.
    pub export_source: Option<String>,
}

impl DecoratorDef {
    fn body_size(&self) -> usize {
        field_size(&self.targets)
            + field_size(&self.allow_multiple)
            + field_size(&self.params)
            + field_size(&self.validate_source)
            + field_size(&self.export_source)
            + 1
    }
}

impl WireSize for DecoratorDef {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for DecoratorDef {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = DecoratorDef::default();
            loop {
                match r.read_tag()? {
                    1 => m.targets = Some(r.read()?),
                    2 => m.allow_multiple = Some(r.read()?),
                    3 => m.params = Some(r.read()?),
                    4 => m.validate_source = Some(r.read()?),
                    5 => m.export_source = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for DecoratorDef {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.targets {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.allow_multiple {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.params {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.validate_source {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.export_source {
                    s.write_field(5, v)?;
                }
                s.write(&[0])
            },
        )
    }
}
