//! Analyses over the definitions: by-value recursion (which fields become `Lazy`/`Box`),
//! wire sizes, lifetimes and derivable traits.
//!
//! Every recursive analysis is a fixed point over the whole type graph, so recursive and
//! mutually recursive definitions get consistent answers, whatever the definition order.

use crate::GenerateError;
use crate::model::{Body, DefId, Model, Traits, Ty};

/// Largest `N × size` in bytes for which `T[N]` of a scalar `T` becomes a Rust array
/// `[T; N]` in views (copied out when decoded); larger ones stay views (`FixedArray`).
pub(crate) const MAX_INLINE_ARRAY_BYTES: usize = 256;

pub(crate) fn run(model: &mut Model<'_>) -> Result<(), GenerateError> {
    mark_recursion(model);
    sizes(model)?;
    lifetimes(model);
    traits(model);
    for def in &mut model.defs {
        let fields = def.fields();
        def.holds_half = fields.iter().any(|f| holds_half(&f.ty));
    }
    Ok(())
}

/// Where a definition holds another by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edge {
    /// Field `i` has the type directly.
    Field(usize),
    /// Field `i` holds it in a fixed array (by value in owned forms).
    FixedField(usize),
    /// A union branch.
    Branch,
}

fn edges(model: &Model<'_>, id: DefId) -> Vec<(DefId, Edge)> {
    let mut out = Vec::new();
    match &model.defs[id].body {
        Body::Struct { fields, .. } | Body::Message { fields } => {
            for (i, f) in fields.iter().enumerate() {
                match &f.ty {
                    Ty::Def(t) if model.defs[*t].is_record() => out.push((*t, Edge::Field(i))),
                    Ty::Fixed(..) => {
                        let mut el = &f.ty;
                        while let Ty::Fixed(inner, _) = el {
                            el = inner;
                        }
                        if let Ty::Def(t) = el {
                            if model.defs[*t].is_record() {
                                out.push((*t, Edge::FixedField(i)));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Body::Union { branches, .. } => {
            for b in branches {
                out.push((b.target, Edge::Branch));
            }
        }
        _ => {}
    }
    out
}

/// Tarjan's strongly connected components, with an explicit stack. Returns the component
/// of every node and whether that component is cyclic.
fn components(model: &Model<'_>) -> (Vec<usize>, Vec<bool>) {
    let n = model.defs.len();
    let adj: Vec<Vec<(DefId, Edge)>> = (0..n).map(|i| edges(model, i)).collect();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![usize::MAX; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut ncomp = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (node, next edge to look at)
        let mut work = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut ei)) = work.last_mut() {
            if let Some(&(w, _)) = adj[v].get(*ei) {
                *ei += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp[w] = ncomp;
                        if w == v {
                            break;
                        }
                    }
                    ncomp += 1;
                }
            }
        }
    }
    let mut size = vec![0usize; ncomp];
    for &c in &comp {
        size[c] += 1;
    }
    let mut cyclic: Vec<bool> = size.iter().map(|&s| s > 1).collect();
    for (v, out) in adj.iter().enumerate() {
        if out.iter().any(|&(w, _)| w == v) {
            cyclic[comp[v]] = true;
        }
    }
    (comp, cyclic)
}

/// Marks the fields that hold a definition of their own by-value cycle: views hold them as
/// `Lazy`, owned forms as `Box`. Arrays and maps break cycles already.
fn mark_recursion(model: &mut Model<'_>) {
    let (comp, cyclic) = components(model);
    for id in 0..model.defs.len() {
        let lazy: Vec<usize> = edges(model, id)
            .into_iter()
            .filter_map(|(t, e)| match e {
                Edge::Field(i) if comp[t] == comp[id] && cyclic[comp[id]] => Some(i),
                _ => None,
            })
            .collect();
        if let Body::Struct { fields, .. } | Body::Message { fields } = &mut model.defs[id].body {
            for i in lazy {
                fields[i].lazy = true;
            }
        }
    }
}

/// True when an owned form would hold a definition of its own cycle inside a fixed array
/// (by value, so of infinite size).
pub(crate) fn owned_fixed_array_cycle(model: &Model<'_>) -> Option<DefId> {
    let (comp, cyclic) = components(model);
    (0..model.defs.len()).find(|&id| {
        edges(model, id).into_iter().any(|(t, e)| {
            matches!(e, Edge::FixedField(_)) && comp[t] == comp[id] && cyclic[comp[id]]
        })
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SizeState {
    Todo,
    Busy,
    Done,
}

fn sizes(model: &mut Model<'_>) -> Result<(), GenerateError> {
    let n = model.defs.len();
    let mut state = vec![SizeState::Todo; n];
    let mut min = vec![0usize; n];
    let mut fixed: Vec<Option<usize>> = vec![None; n];
    for root in 0..n {
        // Explicit stack: a struct is finished once every struct it holds is.
        let mut work = vec![root];
        while let Some(&id) = work.last() {
            match state[id] {
                SizeState::Done => {
                    work.pop();
                    continue;
                }
                SizeState::Todo => {
                    state[id] = SizeState::Busy;
                    let mut deps = Vec::new();
                    if let Body::Struct { fields, .. } = &model.defs[id].body {
                        for f in fields {
                            struct_deps(model, &f.ty, &mut deps);
                        }
                    }
                    for d in deps {
                        match state[d] {
                            SizeState::Todo => work.push(d),
                            SizeState::Busy => {
                                return Err(GenerateError::unsupported(
                                    &model.defs[id].fqn,
                                    format!(
                                        "`{}` contains itself by value through structs only, so it has no finite encoding",
                                        model.defs[d].fqn
                                    ),
                                ));
                            }
                            SizeState::Done => {}
                        }
                    }
                }
                SizeState::Busy => {
                    // Every struct dependency is done now.
                    work.pop();
                    let (m, f) = match &model.defs[id].body {
                        Body::Struct { fields, .. } => {
                            let mut m = 0usize;
                            let mut f = Some(0usize);
                            for field in fields {
                                m = m.saturating_add(ty_min(model, &min, &field.ty));
                                f = match (f, ty_fixed(model, &fixed, &field.ty)) {
                                    (Some(a), Some(b)) => a.checked_add(b),
                                    _ => None,
                                };
                            }
                            (m, f)
                        }
                        // A message is its length prefix at least: a body of length 0
                        // (no fields, no end marker) decodes, as the reference decodes it
                        // (SPEC.md, "message without an end marker"). A union's body holds
                        // its discriminator at least.
                        Body::Message { .. } => (4, None),
                        Body::Union { .. } => (5, None),
                        Body::Enum { base, .. } | Body::Flags { base, .. } => {
                            (base.size(), Some(base.size()))
                        }
                        _ => (0, None),
                    };
                    min[id] = m;
                    fixed[id] = f;
                    state[id] = SizeState::Done;
                }
            }
        }
    }
    for (id, def) in model.defs.iter_mut().enumerate() {
        def.min_size = min[id];
        def.fixed_size = fixed[id];
    }
    Ok(())
}

/// The structs a type holds by value (their sizes are needed first).
fn struct_deps(model: &Model<'_>, ty: &Ty, out: &mut Vec<DefId>) {
    match ty {
        Ty::Def(d) if matches!(model.defs[*d].body, Body::Struct { .. }) => out.push(*d),
        Ty::Fixed(inner, _) => struct_deps(model, inner, out),
        _ => {}
    }
}

fn ty_min(model: &Model<'_>, min: &[usize], ty: &Ty) -> usize {
    match ty {
        Ty::Str => 5,
        Ty::Array(_) | Ty::Map(..) => 4,
        Ty::Fixed(inner, n) => ty_min(model, min, inner).saturating_mul(*n),
        Ty::Def(d) => match &model.defs[*d].body {
            Body::Message { .. } | Body::Union { .. } => 5,
            Body::Enum { base, .. } | Body::Flags { base, .. } => base.size(),
            _ => min[*d],
        },
        scalar => scalar.scalar_size().unwrap_or(0),
    }
}

fn ty_fixed(model: &Model<'_>, fixed: &[Option<usize>], ty: &Ty) -> Option<usize> {
    match ty {
        Ty::Str | Ty::Array(_) | Ty::Map(..) => None,
        Ty::Fixed(inner, n) => ty_fixed(model, fixed, inner)?.checked_mul(*n),
        Ty::Def(d) => match &model.defs[*d].body {
            Body::Message { .. } | Body::Union { .. } => None,
            Body::Enum { base, .. } | Body::Flags { base, .. } => Some(base.size()),
            _ => fixed[*d],
        },
        scalar => scalar.scalar_size(),
    }
}

/// The fixed wire size of a type, if it has one (after [`sizes`] ran).
pub(crate) fn fixed_size(model: &Model<'_>, ty: &Ty) -> Option<usize> {
    match ty {
        Ty::Str | Ty::Array(_) | Ty::Map(..) => None,
        Ty::Fixed(inner, n) => fixed_size(model, inner)?.checked_mul(*n),
        Ty::Def(d) => model.defs[*d].fixed_size,
        scalar => scalar.scalar_size(),
    }
}

/// True for the element types of `T[N]` that views hold as a Rust array `[T; N]`: scalars
/// other than bytes (those are `&[u8; N]`), and enums and flags that have a default.
pub(crate) fn is_inline_scalar(model: &Model<'_>, ty: &Ty) -> bool {
    match ty {
        Ty::U8 | Ty::Str | Ty::Array(_) | Ty::Fixed(..) | Ty::Map(..) => false,
        Ty::Def(d) => match &model.defs[*d].body {
            Body::Flags { .. } => true,
            Body::Enum { .. } => enum_has_zero(model, *d),
            _ => false,
        },
        _ => true,
    }
}

/// How views hold `T[N]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FixedRepr {
    /// `&'a [u8; N]`.
    Bytes,
    /// `[T; N]`, copied.
    Inline,
    /// `FixedArray<'a, T, N>`.
    View,
}

pub(crate) fn fixed_repr(model: &Model<'_>, el: &Ty, n: usize) -> FixedRepr {
    if *el == Ty::U8 {
        return FixedRepr::Bytes;
    }
    let size = match el {
        Ty::Def(d) => match &model.defs[*d].body {
            Body::Enum { base, .. } | Body::Flags { base, .. } => base.size(),
            _ => usize::MAX,
        },
        other => other.scalar_size().unwrap_or(usize::MAX),
    };
    if is_inline_scalar(model, el) && size.saturating_mul(n) <= MAX_INLINE_ARRAY_BYTES {
        FixedRepr::Inline
    } else {
        FixedRepr::View
    }
}

pub(crate) fn enum_has_zero(model: &Model<'_>, id: DefId) -> bool {
    match &model.defs[id].body {
        Body::Enum { members, .. } => members.iter().any(|m| m.value == 0),
        Body::Flags { .. } => true,
        _ => false,
    }
}

/// True when the view of `ty` borrows from the input.
pub(crate) fn ty_lifetime(model: &Model<'_>, ty: &Ty) -> bool {
    match ty {
        Ty::Str | Ty::Array(_) | Ty::Map(..) => true,
        Ty::Fixed(el, n) => match fixed_repr(model, el, *n) {
            FixedRepr::Inline => false,
            FixedRepr::Bytes | FixedRepr::View => true,
        },
        Ty::Def(d) => model.defs[*d].lifetime,
        _ => false,
    }
}

fn lifetimes(model: &mut Model<'_>) {
    loop {
        let mut changed = false;
        for id in 0..model.defs.len() {
            if model.defs[id].lifetime {
                continue;
            }
            let def = &model.defs[id];
            let needs = match &def.body {
                Body::Struct { fields, .. } | Body::Message { fields } => {
                    fields.iter().any(|f| f.lazy || ty_lifetime(model, &f.ty))
                }
                Body::Union { branches, unknown } => {
                    unknown.is_some() || branches.iter().any(|b| model.defs[b.target].lifetime)
                }
                _ => false,
            };
            if needs {
                model.defs[id].lifetime = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Traits of a view type.
pub(crate) fn view_ty_traits(model: &Model<'_>, ty: &Ty) -> Traits {
    const NONE: Traits = Traits {
        eq: false,
        hash: false,
        default: false,
    };
    match ty {
        t if t.is_float() => Traits {
            eq: false,
            hash: false,
            default: true,
        },
        Ty::Array(el) if **el == Ty::U8 => Traits::ALL,
        Ty::Array(el) => Traits {
            eq: view_ty_traits(model, el).eq,
            hash: false,
            default: true,
        },
        Ty::Fixed(el, n) => match fixed_repr(model, el, *n) {
            FixedRepr::Bytes => Traits {
                default: false,
                ..Traits::ALL
            },
            FixedRepr::Inline => {
                let t = view_ty_traits(model, el);
                Traits {
                    default: t.default && *n <= 32,
                    ..t
                }
            }
            // `FixedArray` has a `Default` when its element type does, like `[T; N]` (which
            // the owned form uses, hence the same limit of 32).
            FixedRepr::View => {
                let t = view_ty_traits(model, el);
                Traits {
                    eq: t.eq,
                    default: t.default && *n <= 32,
                    ..NONE
                }
            }
        },
        Ty::Map(..) => Traits {
            default: true,
            ..NONE
        },
        Ty::Def(d) => model.defs[*d].view_traits,
        _ => Traits::ALL,
    }
}

/// Traits of an owned type.
pub(crate) fn owned_ty_traits(model: &Model<'_>, ty: &Ty) -> Traits {
    match ty {
        t if t.is_float() => Traits {
            eq: false,
            hash: false,
            default: true,
        },
        Ty::Array(el) => Traits {
            default: true,
            ..owned_ty_traits(model, el)
        },
        Ty::Fixed(el, n) => {
            let t = owned_ty_traits(model, el);
            Traits {
                default: t.default && *n <= 32,
                ..t
            }
        }
        Ty::Map(k, v) => Traits {
            default: true,
            ..owned_ty_traits(model, k).and(owned_ty_traits(model, v))
        },
        Ty::Def(d) if model.defs[*d].lifetime => model.defs[*d].owned_traits,
        Ty::Def(d) => model.defs[*d].view_traits,
        _ => Traits::ALL,
    }
}

fn traits(model: &mut Model<'_>) {
    // Enums and flags first: they are leaves.
    for id in 0..model.defs.len() {
        let has_zero = enum_has_zero(model, id);
        let def = &mut model.defs[id];
        match &def.body {
            Body::Enum { .. } => {
                def.view_traits = Traits {
                    default: has_zero,
                    ..Traits::ALL
                };
            }
            Body::Flags { .. } => def.view_traits = Traits::ALL,
            _ => {}
        }
        def.owned_traits = def.view_traits;
    }
    // Greatest fixed point for records: start from everything and remove what fails.
    loop {
        let mut changed = false;
        for id in 0..model.defs.len() {
            let def = &model.defs[id];
            let (view, owned) = match &def.body {
                Body::Struct { fields, .. } => {
                    let mut view = Traits::ALL;
                    let mut owned = Traits::ALL;
                    for f in fields {
                        if f.lazy {
                            // `Lazy<T>` has a `Default` when `T` does.
                            view = view.and(Traits {
                                eq: false,
                                hash: false,
                                default: view_ty_traits(model, &f.ty).default,
                            });
                        } else if let Some(n) = fixed_bytes(&f.ty) {
                            // `&[u8; N]`: the struct's `Default` is written out (`&[0; N]`).
                            view.default &= n <= 32;
                        } else {
                            view = view.and(view_ty_traits(model, &f.ty));
                        }
                        owned = owned.and(owned_ty_traits(model, &f.ty));
                    }
                    // Both forms have a `Default` or neither has.
                    view.default &= owned.default;
                    owned.default = view.default;
                    (view, owned)
                }
                Body::Message { fields } => {
                    let mut view = Traits::ALL;
                    let mut owned = Traits::ALL;
                    for f in fields {
                        if f.lazy {
                            view.eq = false;
                            view.hash = false;
                        } else {
                            view = view.and(view_ty_traits(model, &f.ty));
                        }
                        owned = owned.and(owned_ty_traits(model, &f.ty));
                    }
                    view.default = true;
                    owned.default = true;
                    (view, owned)
                }
                Body::Union { branches, .. } => {
                    let mut view = Traits::ALL;
                    let mut owned = Traits::ALL;
                    for b in branches {
                        let target = Ty::Def(b.target);
                        view = view.and(view_ty_traits(model, &target));
                        owned = owned.and(owned_ty_traits(model, &target));
                    }
                    view.default = false;
                    owned.default = false;
                    (view, owned)
                }
                _ => continue,
            };
            if view != def.view_traits || owned != def.owned_traits {
                let def = &mut model.defs[id];
                def.view_traits = view;
                def.owned_traits = owned;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// `N` when `ty` is `byte[N]`, which views hold as `&[u8; N]`.
pub(crate) fn fixed_bytes(ty: &Ty) -> Option<usize> {
    match ty {
        Ty::Fixed(el, n) if **el == Ty::U8 => Some(*n),
        _ => None,
    }
}

fn holds_half(ty: &Ty) -> bool {
    match ty {
        Ty::F16 | Ty::BF16 => true,
        Ty::Array(el) | Ty::Fixed(el, _) => holds_half(el),
        Ty::Map(k, v) => holds_half(k) || holds_half(v),
        _ => false,
    }
}

/// True when a type contains a `float16`/`bfloat16` outside of a nested definition.
pub(crate) fn ty_holds_half(ty: &Ty) -> bool {
    holds_half(ty)
}
