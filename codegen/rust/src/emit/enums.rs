//! Enums (closed and `@forward_compatible`) and `@flags` enums.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{Emitter, int_lit};
use crate::GenerateError;
use crate::model::{Base, Body, DefId, Member};
use crate::names::ident;
use crate::rules::ItemForm;

impl Emitter<'_, '_> {
    fn member_docs(m: &Member) -> TokenStream {
        let mut lines = Self::schema_doc(m.doc.as_deref());
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!("`{} = {}`", m.src_name, m.value));
        Self::doc_lines(&lines)
    }

    /// `value as u64` (the detail of an error), without a cast for `u64`.
    fn as_u64(base: Base, v: TokenStream) -> TokenStream {
        if base == Base::U64 {
            v
        } else {
            quote!(#v as u64)
        }
    }

    pub(crate) fn enumeration(&self, id: DefId) -> Result<TokenStream, GenerateError> {
        let d = self.def(id);
        let Body::Enum {
            base,
            members,
            unrecognized,
        } = &d.body
        else {
            return Ok(TokenStream::new());
        };
        let rt = &self.rt;
        let name = ident(&d.name);
        let repr = ident(base.rust());
        let size = Literal::usize_unsuffixed(base.size());
        let docs = self.def_docs(id);
        let deprecated = Self::deprecated_attr(d.deprecated.as_ref());
        let allow_dep = self.allow_deprecated(id);
        let (defmt, defmt_impl) = self.defmt_for_enum(id);
        let serde = self.serde_derive(ItemForm::Same);
        let user = self.user_type_attrs(id, ItemForm::Same);
        let ok = quote!(::core::result::Result::Ok);
        let default_member = members
            .iter()
            .position(|m| m.value == 0 && m.alias_of.is_none());
        let variants_src: Vec<(usize, &Member)> = members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.alias_of.is_none())
            .collect();
        let derive_default = if default_member.is_some() {
            quote!(Default,)
        } else {
            TokenStream::new()
        };
        let aliases: Vec<TokenStream> = members
            .iter()
            .filter_map(|m| {
                let target = &members[m.alias_of?];
                let a = ident(&m.name);
                let t = ident(&target.name);
                let mdocs = Self::member_docs(m);
                let dep = Self::deprecated_attr(m.deprecated.as_ref());
                Some(quote! {
                    #mdocs
                    #dep
                    pub const #a: Self = Self::#t;
                })
            })
            .collect();
        let alias_impl = (!aliases.is_empty()).then(|| {
            quote! {
                #allow_dep
                impl #name {
                    #(#aliases)*
                }
            }
        });
        match unrecognized {
            None => {
                let variants = variants_src.iter().map(|(i, m)| {
                    let v = ident(&m.name);
                    let mdocs = Self::member_docs(m);
                    let mattrs = self.user_member_attrs(id, &m.src_name, ItemForm::Same);
                    let dep = Self::deprecated_attr(m.deprecated.as_ref());
                    let default = (Some(*i) == default_member).then(|| quote!(#[default]));
                    let value = int_lit(m.value);
                    quote! {
                        #mdocs
                        #mattrs
                        #dep
                        #default
                        #v = #value,
                    }
                });
                let arms = variants_src.iter().map(|(_, m)| {
                    let v = ident(&m.name);
                    let value = int_lit(m.value);
                    quote!(#value => #ok(Self::#v),)
                });
                let detail = Self::as_u64(*base, quote!(value));
                Ok(quote! {
                    #docs
                    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, #derive_default)]
                    #defmt
                    #serde
                    #user
                    #[repr(#repr)]
                    #[allow(clippy::enum_variant_names)]
                    #deprecated
                    #allow_dep
                    pub enum #name {
                        #(#variants)*
                    }

                    #alias_impl

                    #allow_dep
                    impl ::core::convert::TryFrom<#repr> for #name {
                        type Error = #repr;
                        /// The member with this value; the value itself when there is none.
                        fn try_from(value: #repr) -> ::core::result::Result<Self, #repr> {
                            match value {
                                #(#arms)*
                                _ => ::core::result::Result::Err(value),
                            }
                        }
                    }

                    #allow_dep
                    impl ::core::convert::From<#name> for #repr {
                        fn from(value: #name) -> Self {
                            value as #repr
                        }
                    }

                    #allow_dep
                    impl #rt::WireSize for #name {
                        const FIXED_SIZE: ::core::option::Option<usize> = ::core::option::Option::Some(#size);
                        const MIN_SIZE: usize = #size;
                    }

                    #allow_dep
                    impl #rt::FixedSize for #name {
                        const SIZE: usize = #size;
                    }

                    #allow_dep
                    impl<'a> #rt::Decode<'a> for #name {
                        #[inline]
                        fn decode(reader: &mut #rt::Reader<'a>) -> ::core::result::Result<Self, #rt::Error> {
                            let at = reader.offset();
                            let value: #repr = reader.read()?;
                            <Self as ::core::convert::TryFrom<#repr>>::try_from(value).map_err(|value| {
                                #rt::Error::new(#rt::ErrorKind::InvalidEnumValue, at).with_detail(#detail)
                            })
                        }
                    }

                    #allow_dep
                    impl #rt::Encode for #name {
                        #[inline]
                        fn encoded_size(&self) -> usize {
                            #size
                        }
                        #[inline]
                        fn encode<S: #rt::Sink>(&self, sink: &mut S) -> ::core::result::Result<(), S::Error> {
                            #rt::Encode::encode(&(*self as #repr), sink)
                        }
                    }

                    #defmt_impl
                })
            }
            Some(unknown) => {
                let u = ident(unknown);
                let variants = variants_src.iter().map(|(i, m)| {
                    let v = ident(&m.name);
                    let mdocs = Self::member_docs(m);
                    let mattrs = self.user_member_attrs(id, &m.src_name, ItemForm::Same);
                    let dep = Self::deprecated_attr(m.deprecated.as_ref());
                    let default = (Some(*i) == default_member).then(|| quote!(#[default]));
                    quote! {
                        #mdocs
                        #mattrs
                        #dep
                        #default
                        #v,
                    }
                });
                let from_arms = variants_src.iter().map(|(_, m)| {
                    let v = ident(&m.name);
                    let value = int_lit(m.value);
                    quote!(#value => Self::#v,)
                });
                let to_arms = variants_src.iter().map(|(_, m)| {
                    let v = ident(&m.name);
                    let value = int_lit(m.value);
                    quote!(#name::#v => #value,)
                });
                Ok(quote! {
                    #docs
                    ///
                    /// `@forward_compatible`: values no member has decode to the extra variant and
                    /// encode back unchanged.
                    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, #derive_default)]
                    #defmt
                    #serde
                    #user
                    #[allow(clippy::enum_variant_names)]
                    #deprecated
                    #allow_dep
                    pub enum #name {
                        #(#variants)*
                        /// A value no member of this version of the schema has.
                        #u(#repr),
                    }

                    #alias_impl

                    #allow_dep
                    impl ::core::convert::From<#repr> for #name {
                        fn from(value: #repr) -> Self {
                            match value {
                                #(#from_arms)*
                                _ => Self::#u(value),
                            }
                        }
                    }

                    #allow_dep
                    impl ::core::convert::From<#name> for #repr {
                        fn from(value: #name) -> Self {
                            match value {
                                #(#to_arms)*
                                #name::#u(value) => value,
                            }
                        }
                    }

                    #allow_dep
                    impl #rt::WireSize for #name {
                        const FIXED_SIZE: ::core::option::Option<usize> = ::core::option::Option::Some(#size);
                        const MIN_SIZE: usize = #size;
                    }

                    #allow_dep
                    impl #rt::FixedSize for #name {
                        const SIZE: usize = #size;
                    }

                    #allow_dep
                    impl<'a> #rt::Decode<'a> for #name {
                        const ALWAYS_VALID: bool = true;
                        #[inline]
                        fn decode(reader: &mut #rt::Reader<'a>) -> ::core::result::Result<Self, #rt::Error> {
                            let value: #repr = reader.read()?;
                            #ok(<Self as ::core::convert::From<#repr>>::from(value))
                        }
                    }

                    #allow_dep
                    impl #rt::Encode for #name {
                        #[inline]
                        fn encoded_size(&self) -> usize {
                            #size
                        }
                        #[inline]
                        fn encode<S: #rt::Sink>(&self, sink: &mut S) -> ::core::result::Result<(), S::Error> {
                            #rt::Encode::encode(&<#repr as ::core::convert::From<Self>>::from(*self), sink)
                        }
                    }

                    #defmt_impl
                })
            }
        }
    }

    pub(crate) fn flags(&self, id: DefId) -> Result<TokenStream, GenerateError> {
        let d = self.def(id);
        let Body::Flags { base, members } = &d.body else {
            return Ok(TokenStream::new());
        };
        let rt = &self.rt;
        let name = ident(&d.name);
        let repr = ident(base.rust());
        let size = Literal::usize_unsuffixed(base.size());
        let mut lines = self.def_doc_lines(id);
        let fc = d.forward_compatible;
        lines.push(String::new());
        lines.push(if fc {
            "A set of flags; `@forward_compatible`, so bits no member declares are kept when decoding.".into()
        } else {
            "A set of flags; decoding rejects bits no member declares.".into()
        });
        let docs = Self::doc_lines(&lines);
        let deprecated = Self::deprecated_attr(d.deprecated.as_ref());
        let allow_dep = self.allow_deprecated(id);
        let (defmt, defmt_impl) = self.defmt_for_enum(id);
        let user = self.user_type_attrs(id, ItemForm::Same);
        let serde_impls = self.flags_serde(id, *base, fc);
        let mask = members.iter().fold(0i128, |acc, m| acc | m.value);
        // Normalise the mask to the base's value range.
        let mask = normalise(*base, mask);
        let all = int_lit(mask);
        let always_valid = fc || mask == base.full_mask();
        let consts = members.iter().map(|m| {
            let c = ident(&m.name);
            let mdocs = Self::member_docs(m);
            let dep = Self::deprecated_attr(m.deprecated.as_ref());
            let value = int_lit(m.value);
            quote! {
                #mdocs
                #dep
                pub const #c: Self = Self { bits: #value };
            }
        });
        let zero_name = members
            .iter()
            .find(|m| m.value == 0)
            .map(|m| m.name.clone())
            .unwrap_or_else(|| "empty".into());
        let named: Vec<TokenStream> = members
            .iter()
            .filter(|m| m.value != 0)
            .map(|m| {
                let n = &m.name;
                let value = int_lit(m.value);
                quote!((#n, #value),)
            })
            .collect();
        let detail = Self::as_u64(*base, quote!((bits & !Self::all().bits)));
        let open = format!("{}(", d.name);
        let decode = if fc {
            quote! {
                let bits: #repr = reader.read()?;
                ::core::result::Result::Ok(Self::from_bits_retain(bits))
            }
        } else {
            quote! {
                let at = reader.offset();
                let bits: #repr = reader.read()?;
                Self::from_bits(bits).ok_or_else(|| {
                    #rt::Error::new(#rt::ErrorKind::InvalidFlags, at).with_detail(#detail)
                })
            }
        };
        let always_valid = always_valid.then(|| {
            quote!(
                const ALWAYS_VALID: bool = true;
            )
        });
        Ok(quote! {
            #docs
            #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
            #defmt
            #user
            #deprecated
            #allow_dep
            pub struct #name {
                bits: #repr,
            }

            #allow_dep
            impl #name {
                #(#consts)*

                /// No flag set.
                pub const fn empty() -> Self {
                    Self { bits: 0 }
                }

                /// Every declared flag set.
                pub const fn all() -> Self {
                    Self { bits: #all }
                }

                /// The raw bits.
                pub const fn bits(self) -> #repr {
                    self.bits
                }

                /// The flags with these bits; `None` when a bit is set that no member declares.
                pub const fn from_bits(bits: #repr) -> ::core::option::Option<Self> {
                    if bits & !Self::all().bits == 0 {
                        ::core::option::Option::Some(Self { bits })
                    } else {
                        ::core::option::Option::None
                    }
                }

                /// The flags with these bits, dropping bits no member declares.
                pub const fn from_bits_truncate(bits: #repr) -> Self {
                    Self { bits: bits & Self::all().bits }
                }

                /// The flags with exactly these bits, undeclared ones included.
                pub const fn from_bits_retain(bits: #repr) -> Self {
                    Self { bits }
                }

                /// True when no bit is set.
                pub const fn is_empty(self) -> bool {
                    self.bits == 0
                }

                /// True when every declared flag is set.
                pub const fn is_all(self) -> bool {
                    self.bits & Self::all().bits == Self::all().bits
                }

                /// True when every flag of `other` is set in `self`.
                pub const fn contains(self, other: Self) -> bool {
                    self.bits & other.bits == other.bits
                }

                /// True when `self` and `other` have a flag in common.
                pub const fn intersects(self, other: Self) -> bool {
                    self.bits & other.bits != 0
                }

                /// The flags set in either.
                pub const fn union(self, other: Self) -> Self {
                    Self { bits: self.bits | other.bits }
                }

                /// The flags set in both.
                pub const fn intersection(self, other: Self) -> Self {
                    Self { bits: self.bits & other.bits }
                }

                /// The flags of `self` not in `other`.
                pub const fn difference(self, other: Self) -> Self {
                    Self { bits: self.bits & !other.bits }
                }

                /// The flags set in exactly one of the two.
                pub const fn symmetric_difference(self, other: Self) -> Self {
                    Self { bits: self.bits ^ other.bits }
                }

                /// The declared flags not set in `self`.
                pub const fn complement(self) -> Self {
                    Self { bits: !self.bits & Self::all().bits }
                }

                /// Sets the flags of `other`.
                pub fn insert(&mut self, other: Self) {
                    self.bits |= other.bits;
                }

                /// Clears the flags of `other`.
                pub fn remove(&mut self, other: Self) {
                    self.bits &= !other.bits;
                }

                /// Flips the flags of `other`.
                pub fn toggle(&mut self, other: Self) {
                    self.bits ^= other.bits;
                }

                /// Sets or clears the flags of `other`.
                pub fn set(&mut self, other: Self, value: bool) {
                    if value {
                        self.insert(other);
                    } else {
                        self.remove(other);
                    }
                }
            }

            impl ::core::ops::BitOr for #name {
                type Output = Self;
                fn bitor(self, other: Self) -> Self {
                    self.union(other)
                }
            }

            impl ::core::ops::BitAnd for #name {
                type Output = Self;
                fn bitand(self, other: Self) -> Self {
                    self.intersection(other)
                }
            }

            impl ::core::ops::BitXor for #name {
                type Output = Self;
                fn bitxor(self, other: Self) -> Self {
                    self.symmetric_difference(other)
                }
            }

            impl ::core::ops::Sub for #name {
                type Output = Self;
                fn sub(self, other: Self) -> Self {
                    self.difference(other)
                }
            }

            impl ::core::ops::Not for #name {
                type Output = Self;
                /// The declared flags not set (undeclared bits are dropped).
                fn not(self) -> Self {
                    self.complement()
                }
            }

            impl ::core::ops::BitOrAssign for #name {
                fn bitor_assign(&mut self, other: Self) {
                    self.insert(other);
                }
            }

            impl ::core::ops::BitAndAssign for #name {
                fn bitand_assign(&mut self, other: Self) {
                    *self = self.intersection(other);
                }
            }

            impl ::core::ops::BitXorAssign for #name {
                fn bitxor_assign(&mut self, other: Self) {
                    self.toggle(other);
                }
            }

            impl ::core::ops::SubAssign for #name {
                fn sub_assign(&mut self, other: Self) {
                    self.remove(other);
                }
            }

            #allow_dep
            impl ::core::fmt::Debug for #name {
                /// The names of the flags set (`Name(A | B)`), then any undeclared bits in hex.
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    const NAMED: &[(&str, #repr)] = &[#(#named)*];
                    f.write_str(#open)?;
                    let mut rest = self.bits;
                    let mut first = true;
                    for &(name, bits) in NAMED {
                        if self.bits & bits == bits && rest & bits != 0 {
                            if !first {
                                f.write_str(" | ")?;
                            }
                            f.write_str(name)?;
                            rest &= !bits;
                            first = false;
                        }
                    }
                    if rest != 0 {
                        if !first {
                            f.write_str(" | ")?;
                        }
                        ::core::write!(f, "{:#x}", rest)?;
                    } else if first {
                        f.write_str(#zero_name)?;
                    }
                    f.write_str(")")
                }
            }

            impl #rt::WireSize for #name {
                const FIXED_SIZE: ::core::option::Option<usize> = ::core::option::Option::Some(#size);
                const MIN_SIZE: usize = #size;
            }

            impl #rt::FixedSize for #name {
                const SIZE: usize = #size;
            }

            impl<'a> #rt::Decode<'a> for #name {
                #always_valid
                #[inline]
                fn decode(reader: &mut #rt::Reader<'a>) -> ::core::result::Result<Self, #rt::Error> {
                    #decode
                }
            }

            impl #rt::Encode for #name {
                #[inline]
                fn encoded_size(&self) -> usize {
                    #size
                }
                #[inline]
                fn encode<S: #rt::Sink>(&self, sink: &mut S) -> ::core::result::Result<(), S::Error> {
                    #rt::Encode::encode(&self.bits, sink)
                }
            }

            #defmt_impl

            #serde_impls
        })
    }

    /// `Serialize`/`Deserialize` of a flags type, by hand: the raw bits as the base integer;
    /// deserializing rejects undeclared bits unless the type is `@forward_compatible`.
    fn flags_serde(&self, id: DefId, base: Base, forward_compatible: bool) -> TokenStream {
        if !self.opts.serde {
            return TokenStream::new();
        }
        let d = self.def(id);
        let name = ident(&d.name);
        let repr = ident(base.rust());
        let cfg = self.serde_cfg_attr();
        let allow_dep = self.allow_deprecated(id);
        let result = quote!(::core::result::Result);
        let from_bits = if forward_compatible {
            quote!(#result::Ok(Self::from_bits_retain(bits)))
        } else {
            let message = format!("{{:#x}} sets bits that no flag of `{}` declares", d.fqn);
            quote! {
                Self::from_bits(bits).ok_or_else(|| {
                    <D::Error as ::serde::de::Error>::custom(::core::format_args!(#message, bits))
                })
            }
        };
        quote! {
            #cfg
            #allow_dep
            impl ::serde::Serialize for #name {
                /// The raw bits, as the base integer.
                fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> #result<S::Ok, S::Error> {
                    ::serde::Serialize::serialize(&self.bits, serializer)
                }
            }

            #cfg
            #allow_dep
            impl<'de> ::serde::Deserialize<'de> for #name {
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> #result<Self, D::Error> {
                    let bits = <#repr as ::serde::Deserialize<'de>>::deserialize(deserializer)?;
                    #from_bits
                }
            }
        }
    }
}

/// `v` as a value of `base` (the OR of members may leave the signed range only through
/// the sign bit, which sign extension already covers).
fn normalise(base: Base, v: i128) -> i128 {
    let bits = base.size() as u32 * 8;
    let m = if bits >= 128 {
        v
    } else {
        v & ((1i128 << bits) - 1)
    };
    if base.signed() && bits < 128 && m >= (1i128 << (bits - 1)) {
        m - (1i128 << bits)
    } else {
        m
    }
}
