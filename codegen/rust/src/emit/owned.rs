//! Conversions between views and owned forms: `View::to_owned_value` and
//! `Owned::as_view`, the runtime's `ToOwnedValue`/`AsView` pair, and `Lend` (which lets
//! collections of owned values lend views of their elements).

use super::Emitter;
use super::var_text as var;
use crate::analysis::{FixedRepr, fixed_repr, ty_lifetime};
use crate::layout::{CALL_WIDTH, Code, STRUCT_LIT_WIDTH, TyText, joined_len};
use crate::model::{Body, DefId, Field, Ty};
use crate::names::ident_text;

/// Writes the body of a function.
type Writer = Box<dyn Fn(&mut Code)>;

/// A conversion expression, kept in the shape that decides how it breaks.
enum Expr {
    /// Never broken.
    Flat(String),
    /// `root.a.b()`: the root and each `.child`; broken, one child per line.
    Chain(String, Vec<String>),
    /// `callee(args)`: broken as calls break.
    Call(String, Vec<String>),
    /// `{ stmt; tail }`: a block of one statement and a tail expression.
    Block(String, String),
}

impl Expr {
    /// `x` followed by `children`, the fields of `x` (`self.f`) being children as well.
    fn chain(x: &str, children: Vec<String>) -> Expr {
        let mut parts = x.split('.');
        let root = parts.next().unwrap_or_default().to_string();
        let mut all: Vec<String> = parts.map(|p| format!(".{p}")).collect();
        all.extend(children);
        Expr::Chain(root, all)
    }

    fn call(callee: impl Into<String>, arg: impl Into<String>) -> Expr {
        Expr::Call(callee.into(), vec![arg.into()])
    }

    /// The expression on one line.
    fn flat(&self) -> String {
        match self {
            Expr::Flat(s) => s.clone(),
            Expr::Chain(root, children) => {
                let mut s = root.clone();
                children.iter().for_each(|c| s.push_str(c));
                s
            }
            Expr::Call(callee, args) => format!("{callee}({})", args.join(", ")),
            Expr::Block(stmt, tail) => format!("{{ {stmt} {tail} }}"),
        }
    }

    /// `prefix expr suffix` (a field of a struct literal): on one line when it fits, else
    /// broken by its shape.
    fn write(&self, code: &mut Code, prefix: &str, suffix: &str) {
        match self {
            Expr::Block(stmt, tail) => {
                code.open(format_args!("{}", prefix.trim_end()));
                code.line(stmt);
                code.line(tail);
                code.close_with(suffix);
            }
            Expr::Chain(root, children) => {
                let flat = self.flat();
                // rustfmt's `chain_width`: a chain wider than a call's arguments may be breaks.
                if flat.len() <= CALL_WIDTH && code.fits(prefix.len() + flat.len() + suffix.len()) {
                    code.line(format_args!("{prefix}{flat}{suffix}"));
                    return;
                }
                code.line(format_args!("{prefix}{root}"));
                code.push_depth();
                for (i, c) in children.iter().enumerate() {
                    let end = if i + 1 == children.len() { suffix } else { "" };
                    code.line(format_args!("{c}{end}"));
                }
                code.pop_depth();
            }
            Expr::Call(callee, args) => {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                code.call(prefix, callee, &args, suffix);
            }
            Expr::Flat(s) => code.line(format_args!("{prefix}{s}{suffix}")),
        }
    }
}

impl Emitter<'_, '_> {
    /// `to_owned_value` on the view, `as_view` on the owned form, and the runtime's
    /// `ToOwnedValue`, `AsView` and `Lend` impls for the pair.
    pub(crate) fn conversions(&self, code: &mut Code, id: DefId, from: &[String]) {
        let d = self.def(id);
        let rt = &self.rt_text;
        let name = ident_text(&d.name);
        let view = self.view_path_text(from, id);
        let allow_dep = self.touches_deprecated(id);
        let allow = |code: &mut Code| {
            if allow_dep {
                code.line("#[allow(deprecated)]");
            }
        };
        let (to_owned, as_view): (Writer, Writer) = match &d.body {
            Body::Struct { fields, .. } | Body::Message { fields } => {
                let message = matches!(d.body, Body::Message { .. });
                let mut owned_fields = Vec::new();
                let mut view_fields = Vec::new();
                for f in fields {
                    let fname = ident_text(&f.name);
                    let place = format!("self.{fname}");
                    owned_fields.push((fname.clone(), self.field_to_owned(f, message, &place)));
                    view_fields.push((fname, self.field_as_view(f, message, &place)));
                }
                let (n, v) = (name.clone(), view.clone());
                (
                    Box::new(move |code| struct_expr(code, &n, &owned_fields)),
                    Box::new(move |code| struct_expr(code, &v, &view_fields)),
                )
            }
            Body::Union { branches, unknown } => {
                let mut to_arms = Vec::new();
                let mut view_arms = Vec::new();
                for b in branches {
                    let v = ident_text(&b.name);
                    let ty = Ty::Def(b.target);
                    let expr = self.to_owned_expr(&ty, "v", 1).flat();
                    to_arms.push((format!("{view}::{v}(v)"), format!("{name}::{v}"), expr));
                    let ve = self.as_view_expr(&ty, "v", true).flat();
                    view_arms.push((format!("Self::{v}(v)"), format!("{view}::{v}"), ve));
                }
                let unknown = unknown.as_ref().map(|u| ident_text(u));
                let (n, v, rt2) = (name.clone(), view.clone(), rt.clone());
                let v2 = view.clone();
                let u2 = unknown.clone();
                (
                    Box::new(move |code| {
                        if to_arms.is_empty() && unknown.is_none() {
                            code.line("match self {}");
                            return;
                        }
                        code.open("match self");
                        for (pat, callee, expr) in &to_arms {
                            code.arm_call(pat, callee, &[expr]);
                        }
                        if let Some(u) = &unknown {
                            unknown_arm(
                                code,
                                &format!("{v}::{u}"),
                                &format!("{n}::{u}"),
                                &[
                                    "discriminator",
                                    &format!("body: {rt2}::alloc_types::Vec::from(body)"),
                                ],
                            );
                        }
                        code.close();
                    }),
                    Box::new(move |code| {
                        if view_arms.is_empty() && u2.is_none() {
                            code.line("match *self {}");
                            return;
                        }
                        code.open("match self");
                        for (pat, callee, expr) in &view_arms {
                            code.arm_call(pat, callee, &[expr]);
                        }
                        if let Some(u) = &u2 {
                            unknown_arm(
                                code,
                                &format!("Self::{u}"),
                                &format!("{v2}::{u}"),
                                &["discriminator: *discriminator", "body: body.as_slice()"],
                            );
                        }
                        code.close();
                    }),
                )
            }
            _ => return,
        };
        let view_of = |lt: &str| TyText::generic(view.clone(), vec![TyText::leaf(lt)]);
        allow(code);
        code.open(format_args!("impl {view}<'_>"));
        code.line("/// Copies the view into its owned form.");
        code.signature(
            "pub fn to_owned_value",
            &["self"],
            &format!(" -> {name}"),
            " {",
        );
        to_owned(code);
        code.close();
        code.close();
        allow(code);
        code.open(format_args!("impl {name}"));
        code.line("/// A view borrowing this value: nothing is copied or encoded.");
        code.signature_returning("pub fn as_view", &["&self"], &view_of("'_"));
        as_view(code);
        code.close();
        code.close();
        allow(code);
        code.impl_open(&format!("impl {rt}::ToOwnedValue"), &format!("{view}<'_>"));
        code.line(format_args!("type Owned = {name};"));
        code.signature(
            "fn to_owned_value",
            &["&self"],
            &format!(" -> {name}"),
            " {",
        );
        code.call("", &format!("{view}::to_owned_value"), &["*self"], "");
        code.close();
        code.close();
        allow(code);
        code.impl_open(&format!("impl {rt}::AsView"), &name);
        code.assign("type View<'a>", &format!("{view}<'a>"));
        code.signature_returning("fn as_view", &["&self"], &view_of("'_"));
        code.line(format_args!("{name}::as_view(self)"));
        code.close();
        code.close();
        allow(code);
        code.impl_open(&format!("impl<'a> {rt}::Lend<'a, {view}<'a>>"), &name);
        code.signature_returning("fn lend", &["&'a self"], &view_of("'a"));
        code.line(format_args!("{name}::as_view(self)"));
        code.close();
        code.close();
    }

    /// A field's conversion from `place` (a view value) to its owned form.
    fn field_to_owned(&self, f: &Field, message: bool, place: &str) -> Expr {
        let rt = &self.rt_text;
        if f.lazy {
            // Lazy<T> -> Box<T::Owned>: decode on access, then convert.
            let boxed = |x: &str, depth: usize| {
                let conv = self.to_owned_expr(&f.ty, &format!("{x}.get()"), depth + 1);
                Expr::call(format!("{rt}::alloc_types::Box::new"), conv.flat())
            };
            if message {
                let v = var(0);
                let body = boxed(&v, 1).flat();
                return Expr::chain(place, vec![format!(".map(|{v}| {body})")]);
            }
            return boxed(place, 0);
        }
        if message {
            match self.to_owned_adapter(&f.ty, 0) {
                Some(call) => Expr::chain(place, vec![call]),
                None => Expr::Flat(place.to_string()),
            }
        } else {
            self.to_owned_expr(&f.ty, place, 0)
        }
    }

    /// The owned form of the view value `x` of type `ty`.
    fn to_owned_expr(&self, ty: &Ty, x: &str, depth: usize) -> Expr {
        let rt = &self.rt_text;
        match ty {
            Ty::Str => Expr::call(format!("{rt}::alloc_types::String::from"), x),
            Ty::Array(el) if **el == Ty::U8 => {
                Expr::call(format!("{rt}::alloc_types::Vec::from"), x)
            }
            Ty::Array(el) => {
                let mut children = vec![".iter()".to_string()];
                children.extend(self.to_owned_adapter(el, depth + 1));
                children.push(".collect()".into());
                Expr::chain(x, children)
            }
            Ty::Fixed(el, n) => match fixed_repr(self.model, el, *n) {
                FixedRepr::Bytes => Expr::Flat(format!("*{x}")),
                FixedRepr::Inline => Expr::Flat(x.to_string()),
                FixedRepr::View => {
                    let call = self.to_owned_adapter(el, depth + 1).unwrap_or_default();
                    let items = var(depth + 20);
                    Expr::Block(
                        format!("let mut {items} = {x}.iter(){call};"),
                        format!("::core::array::from_fn(|_| {items}.next().unwrap_or_default())"),
                    )
                }
            },
            Ty::Map(k, v) => {
                let ka = self.to_owned_adapter(k, depth + 1);
                let va = self.to_owned_adapter(v, depth + 1);
                if ka.is_none() && va.is_none() {
                    return Expr::chain(x, vec![".iter()".into(), ".collect()".into()]);
                }
                let (kv, vv) = (var(depth + 1), var(depth + 2));
                let kx = self.to_owned_expr(k, &kv, depth + 3).flat();
                let vx = self.to_owned_expr(v, &vv, depth + 3).flat();
                Expr::chain(
                    x,
                    vec![
                        ".iter()".into(),
                        format!(".map(|({kv}, {vv})| ({kx}, {vx}))"),
                        ".collect()".into(),
                    ],
                )
            }
            Ty::Def(d) if self.def(*d).is_record() && self.def(*d).lifetime => {
                Expr::chain(x, vec![".to_owned_value()".into()])
            }
            _ => Expr::Flat(x.to_string()),
        }
    }

    /// The `.map(..)` (or `.copied()`) converting the elements of an iterator or option of
    /// `ty` views; `None` when they need no conversion.
    fn to_owned_adapter(&self, ty: &Ty, depth: usize) -> Option<String> {
        let rt = &self.rt_text;
        match ty {
            Ty::Str => Some(format!(".map({rt}::alloc_types::String::from)")),
            Ty::Array(el) if **el == Ty::U8 => Some(format!(".map({rt}::alloc_types::Vec::from)")),
            Ty::Fixed(el, n) if fixed_repr(self.model, el, *n) == FixedRepr::Bytes => {
                Some(".copied()".into())
            }
            Ty::Fixed(el, n) if fixed_repr(self.model, el, *n) == FixedRepr::Inline => None,
            Ty::Array(_) | Ty::Fixed(..) | Ty::Map(..) => {
                let param = var(depth);
                let body = self.to_owned_expr(ty, &param, depth + 1).flat();
                Some(format!(".map(|{param}| {body})"))
            }
            Ty::Def(d) if self.def(*d).is_record() && self.def(*d).lifetime => {
                let param = var(depth);
                Some(format!(".map(|{param}| {param}.to_owned_value())"))
            }
            _ => None,
        }
    }

    /// A field's view borrowed from the owned value at `place`.
    fn field_as_view(&self, f: &Field, message: bool, place: &str) -> Expr {
        let rt = &self.rt_text;
        if f.lazy {
            // Box<T::Owned> -> Lazy<T>, lent by the boxed value.
            return if message {
                Expr::chain(
                    place,
                    vec![
                        ".as_deref()".into(),
                        format!(".map({rt}::Lazy::from_owned)"),
                    ],
                )
            } else {
                Expr::call(format!("{rt}::Lazy::from_owned"), format!("&*{place}"))
            };
        }
        if !message {
            return self.as_view_expr(&f.ty, place, false);
        }
        match &f.ty {
            Ty::Str => Expr::chain(place, vec![".as_deref()".into()]),
            Ty::Array(el) if **el == Ty::U8 => Expr::chain(place, vec![".as_deref()".into()]),
            Ty::Fixed(el, n) if fixed_repr(self.model, el, *n) == FixedRepr::Bytes => {
                Expr::chain(place, vec![".as_ref()".into()])
            }
            ty if self.is_copy_in_both(ty) => Expr::Flat(place.to_string()),
            ty => {
                // `from_owned` takes the reference as it is: pass the function itself.
                if let Some(lender) = self.lender(ty) {
                    return Expr::chain(place, vec![".as_ref()".into(), format!(".map({lender})")]);
                }
                let v = var(0);
                let body = self.as_view_expr(ty, &v, true).flat();
                Expr::chain(
                    place,
                    vec![".as_ref()".into(), format!(".map(|{v}| {body})")],
                )
            }
        }
    }

    /// True when the owned and view forms are the same `Copy` type.
    fn is_copy_in_both(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Str | Ty::Array(_) | Ty::Map(..) => false,
            Ty::Fixed(el, n) => fixed_repr(self.model, el, *n) == FixedRepr::Inline,
            Ty::Def(d) => !self.def(*d).lifetime,
            _ => true,
        }
    }

    /// `Array::from_owned`, `FixedArray::from_owned`, `Map::from_btree_map` or
    /// `Map::from_pairs` when the view of `ty` is lent by its owned collection (elements, keys
    /// or values that borrow, or a `BTreeMap`), rather than a slice the view can point at.
    fn lender(&self, ty: &Ty) -> Option<String> {
        let rt = &self.rt_text;
        let lt = |t: &Ty| ty_lifetime(self.model, t);
        match ty {
            Ty::Array(el) if **el != Ty::U8 && lt(el) => Some(format!("{rt}::Array::from_owned")),
            Ty::Fixed(el, n) if fixed_repr(self.model, el, *n) == FixedRepr::View && lt(el) => {
                Some(format!("{rt}::FixedArray::from_owned"))
            }
            Ty::Map(..) if self.opts.owned_map == crate::OwnedMap::BTreeMap => {
                Some(format!("{rt}::Map::from_btree_map"))
            }
            Ty::Map(k, v) if lt(k) || lt(v) => Some(format!("{rt}::Map::from_pairs")),
            _ => None,
        }
    }

    /// The view of owned value `x` (a place when `is_ref` is false, a reference otherwise).
    fn as_view_expr(&self, ty: &Ty, x: &str, is_ref: bool) -> Expr {
        let rt = &self.rt_text;
        let borrow = if is_ref {
            x.to_string()
        } else {
            format!("&{x}")
        };
        let copied = || {
            Expr::Flat(if is_ref {
                format!("*{x}")
            } else {
                x.to_string()
            })
        };
        if let Some(lender) = self.lender(ty) {
            return Expr::call(lender, borrow);
        }
        match ty {
            Ty::Str => Expr::chain(x, vec![".as_str()".into()]),
            Ty::Array(el) if **el == Ty::U8 => Expr::chain(x, vec![".as_slice()".into()]),
            Ty::Array(_) => Expr::call(format!("{rt}::Array::from_slice"), borrow),
            Ty::Fixed(el, n) => match fixed_repr(self.model, el, *n) {
                FixedRepr::Bytes => Expr::Flat(borrow),
                FixedRepr::Inline => copied(),
                FixedRepr::View => Expr::call(format!("{rt}::FixedArray::from_array"), borrow),
            },
            Ty::Map(..) => Expr::call(format!("{rt}::Map::from_slice"), borrow),
            Ty::Def(d) if self.def(*d).lifetime => Expr::chain(x, vec![".as_view()".into()]),
            _ => copied(),
        }
    }
}

/// `Path { name: expr, .. }` as the tail of a function: on one line when every field is
/// flat and they fit in [`STRUCT_LIT_WIDTH`], else one field per line.
fn struct_expr(code: &mut Code, path: &str, fields: &[(String, Expr)]) {
    if fields.is_empty() {
        code.line(format_args!("{path} {{}}"));
        return;
    }
    let flat: Vec<String> = fields
        .iter()
        .map(|(n, e)| format!("{n}: {}", e.flat()))
        .collect();
    let len = joined_len(&flat, 2);
    let all_flat = fields.iter().all(|(_, e)| !matches!(e, Expr::Block(..)));
    if all_flat && len <= STRUCT_LIT_WIDTH && code.fits(path.len() + len + 5) {
        code.line(format_args!("{path} {{ {} }}", flat.join(", ")));
        return;
    }
    code.open(path);
    for (n, e) in fields {
        e.write(code, &format!("{n}: "), ",");
    }
    code.close();
}

/// The arm of an unknown branch: `pat { discriminator, body } => path { fields },`. The
/// pattern is always broken (its fields are wider than rustfmt's struct literal width), and
/// the body continues the line of its closing brace.
fn unknown_arm(code: &mut Code, pat: &str, path: &str, fields: &[&str]) {
    code.open(pat);
    code.line("discriminator,");
    code.line("body,");
    code.pop_depth();
    code.struct_lit("} => ", path, fields, ",");
}
