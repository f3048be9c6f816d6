//! Constants: `pub const NAME: T = value;` with bit-exact floats and runtime types for
//! uuids, timestamps and durations.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{Emitter, int_lit};
use crate::GenerateError;
use crate::model::{Body, DefId, Ty};
use crate::names::ident;
use bebop_descriptor::{LiteralKind, LiteralValue};

impl Emitter<'_, '_> {
    pub(crate) fn constant(&self, id: DefId) -> Result<TokenStream, GenerateError> {
        let d = self.def(id);
        let Body::Const { ty, ty_text, value } = &d.body else {
            return Ok(TokenStream::new());
        };
        let at = d.fqn.as_str();
        let rt = &self.rt;
        let mut lines = self.def_doc_lines(id);
        lines.push(String::new());
        lines.push(format!("Type `{ty_text}`."));
        let docs = Self::doc_lines(&lines);
        let name = ident(&d.name);
        let deprecated = Self::deprecated_attr(d.deprecated.as_ref());
        let mismatch = || {
            GenerateError::invalid(
                at,
                format!("a {:?} value for a const of type {ty_text}", value.kind()),
            )
        };
        let mut allow = TokenStream::new();
        let (rust_ty, expr) = match ty {
            Ty::Bool => match (value.kind(), value.bool_value) {
                (LiteralKind::Bool, Some(b)) => (quote!(bool), quote!(#b)),
                _ => return Err(mismatch()),
            },
            Ty::U8
            | Ty::I8
            | Ty::I16
            | Ty::U16
            | Ty::I32
            | Ty::U32
            | Ty::I64
            | Ty::U64
            | Ty::I128
            | Ty::U128 => {
                let v = int_value(ty, value).ok_or_else(mismatch)?;
                let (lo, hi, rust) = int_range(ty);
                if v < lo || v > hi {
                    return Err(GenerateError::invalid(
                        at,
                        format!("{v} does not fit type {ty_text}"),
                    ));
                }
                let rust = ident(rust);
                (quote!(#rust), int_lit(v))
            }
            Ty::F32 | Ty::F64 | Ty::F16 | Ty::BF16 => {
                let v = match (value.kind(), value.float_value, value.int_value) {
                    (LiteralKind::Float, Some(f), _) => f,
                    (LiteralKind::Int, _, Some(i)) => i as f64,
                    _ => return Err(mismatch()),
                };
                allow = quote!(#[allow(clippy::approx_constant, clippy::excessive_precision)]);
                float_const(ty, v, rt)
            }
            Ty::Str => match (value.kind(), &value.string_value) {
                (LiteralKind::String, Some(s)) => {
                    let lit = Literal::string(s);
                    (quote!(&str), quote!(#lit))
                }
                _ => return Err(mismatch()),
            },
            Ty::Uuid => match (value.kind(), value.uuid_value) {
                (LiteralKind::Uuid, Some(u)) => {
                    let v = hex_lit(u.as_u128(), 32);
                    (quote!(#rt::Uuid), quote!(#rt::Uuid::from_u128(#v)))
                }
                _ => return Err(mismatch()),
            },
            Ty::Timestamp => match (value.kind(), value.timestamp_value) {
                (LiteralKind::Timestamp, Some(t)) => {
                    let (s, n, o) = (
                        int_lit(t.seconds().into()),
                        int_lit(t.nanos().into()),
                        int_lit(t.offset_ms().into()),
                    );
                    (
                        quote!(#rt::Timestamp),
                        quote!(#rt::Timestamp::new_const(#s, #n, #o)),
                    )
                }
                _ => return Err(mismatch()),
            },
            Ty::Duration => match (value.kind(), value.duration_value) {
                (LiteralKind::Duration, Some(t)) => {
                    let (s, n) = (int_lit(t.seconds().into()), int_lit(t.nanos().into()));
                    (
                        quote!(#rt::Duration),
                        quote!(#rt::Duration::new_const(#s, #n)),
                    )
                }
                _ => return Err(mismatch()),
            },
            Ty::Array(el) if **el == Ty::U8 => {
                match (value.kind(), &value.bytes_value, &value.string_value) {
                    (LiteralKind::Bytes, Some(b), _) => {
                        let lit = Literal::byte_string(b);
                        (quote!(&[u8]), quote!(#lit))
                    }
                    (LiteralKind::String, _, Some(s)) => {
                        let lit = Literal::byte_string(s.as_bytes());
                        (quote!(&[u8]), quote!(#lit))
                    }
                    _ => return Err(mismatch()),
                }
            }
            _ => {
                return Err(GenerateError::unsupported(
                    at,
                    format!("consts of type {ty_text} have no Rust form"),
                ));
            }
        };
        Ok(quote! {
            #docs
            #deprecated
            #allow
            pub const #name: #rust_ty = #expr;
        })
    }
}

/// The integer value of a literal for an integer type: from `raw_value` when it is a plain
/// literal (for values beyond `int64`), else from `int_value` (sign-extended for signed
/// types, reinterpreted as `uint64` bits for `uint64`).
fn int_value(ty: &Ty, value: &LiteralValue) -> Option<i128> {
    if value.kind() != LiteralKind::Int {
        return None;
    }
    if let Some(raw) = value.raw_value.as_deref().and_then(parse_int) {
        return Some(raw);
    }
    let i = value.int_value?;
    Some(match ty {
        Ty::U64 | Ty::U128 if i < 0 => i as u64 as i128,
        _ => i as i128,
    })
}

fn parse_int(s: &str) -> Option<i128> {
    let s: String = s.chars().filter(|c| *c != '_').collect();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.as_str()),
    };
    let v = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u128::from_str_radix(hex, 16).ok()?
    } else {
        digits.parse::<u128>().ok()?
    };
    if neg {
        0i128.checked_sub_unsigned(v)
    } else {
        i128::try_from(v).ok()
    }
}

fn int_range(ty: &Ty) -> (i128, i128, &'static str) {
    match ty {
        Ty::U8 => (0, u8::MAX.into(), "u8"),
        Ty::I8 => (i8::MIN.into(), i8::MAX.into(), "i8"),
        Ty::I16 => (i16::MIN.into(), i16::MAX.into(), "i16"),
        Ty::U16 => (0, u16::MAX.into(), "u16"),
        Ty::I32 => (i32::MIN.into(), i32::MAX.into(), "i32"),
        Ty::U32 => (0, u32::MAX.into(), "u32"),
        Ty::I64 => (i64::MIN.into(), i64::MAX.into(), "i64"),
        Ty::U64 => (0, u64::MAX.into(), "u64"),
        Ty::I128 => (i128::MIN, i128::MAX, "i128"),
        // uint128 values above i128::MAX cannot come through the descriptor's int64 anyway.
        _ => (0, i128::MAX, "u128"),
    }
}

fn hex_lit(v: u128, digits: usize) -> TokenStream {
    let s = format!("0x{v:0digits$x}");
    // Group by 4 hex digits from the right for readability: 0x550e_8400_...
    let body = &s[2..];
    let mut grouped = String::new();
    for (i, c) in body.chars().enumerate() {
        if i > 0 && (body.len() - i) % 4 == 0 {
            grouped.push('_');
        }
        grouped.push(c);
    }
    let text = format!("0x{grouped}");
    text.parse().unwrap_or_else(|_| {
        let l = Literal::u128_unsuffixed(v);
        quote!(#l)
    })
}

/// A float constant, bit-exact: finite values as the shortest literal that reads back to
/// the same value, infinities and the canonical NaN by name, other NaNs by their bits.
fn float_const(ty: &Ty, v: f64, rt: &TokenStream) -> (TokenStream, TokenStream) {
    match ty {
        Ty::F64 => {
            let expr = if v.is_finite() {
                let l = Literal::f64_unsuffixed(v);
                quote!(#l)
            } else if v == f64::INFINITY {
                quote!(f64::INFINITY)
            } else if v == f64::NEG_INFINITY {
                quote!(f64::NEG_INFINITY)
            } else if v.to_bits() == f64::NAN.to_bits() {
                quote!(f64::NAN)
            } else {
                let b = hex_lit(v.to_bits().into(), 16);
                quote!(f64::from_bits(#b))
            };
            (quote!(f64), expr)
        }
        Ty::F32 => {
            let f = v as f32;
            let expr = if f.is_finite() {
                let l = Literal::f32_unsuffixed(f);
                quote!(#l)
            } else if f == f32::INFINITY {
                quote!(f32::INFINITY)
            } else if f == f32::NEG_INFINITY {
                quote!(f32::NEG_INFINITY)
            } else if f.to_bits() == f32::NAN.to_bits() {
                quote!(f32::NAN)
            } else {
                let b = hex_lit(f.to_bits().into(), 8);
                quote!(f32::from_bits(#b))
            };
            (quote!(f32), expr)
        }
        Ty::F16 => {
            let b = hex_lit(half::f16::from_f64(v).to_bits().into(), 4);
            (quote!(#rt::f16), quote!(#rt::f16::from_bits(#b)))
        }
        _ => {
            let b = hex_lit(half::bf16::from_f64(v).to_bits().into(), 4);
            (quote!(#rt::bf16), quote!(#rt::bf16::from_bits(#b)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_literals_parse_with_signs_hex_and_underscores() {
        assert_eq!(parse_int("-0x80"), Some(-128));
        assert_eq!(parse_int("1_000"), Some(1000));
        assert_eq!(
            parse_int("0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"),
            None,
            "beyond i128"
        );
        assert_eq!(parse_int("1.5"), None);
        assert_eq!(
            parse_int("-170141183460469231731687303715884105728"),
            Some(i128::MIN)
        );
        assert_eq!(parse_int("-170141183460469231731687303715884105729"), None);
    }

    #[test]
    fn floats_are_bit_exact() {
        let rt = quote!(::rt);
        let (_, e) = float_const(&Ty::F64, f64::from_bits(0x7ff8_0000_0000_0001), &rt);
        assert_eq!(e.to_string(), "f64 :: from_bits (0x7ff8_0000_0000_0001)");
        let (_, e) = float_const(&Ty::F64, f64::NAN, &rt);
        assert_eq!(e.to_string(), "f64 :: NAN");
        let (_, e) = float_const(&Ty::F64, 0.1, &rt);
        assert_eq!(e.to_string(), "0.1");
        let (_, e) = float_const(&Ty::F32, 0.1, &rt);
        assert_eq!(e.to_string(), "0.1");
        let (_, e) = float_const(&Ty::F64, -0.0, &rt);
        assert_eq!(e.to_string().replace(' ', ""), "-0.0");
    }
}
