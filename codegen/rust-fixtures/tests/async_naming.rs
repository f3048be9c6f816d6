//! The async services generated for the synthetic `naming.bop`
//! (`codegen/rust/tests/expected/variants/naming_async.rs`, gated by `feature = "rpc"`): a
//! service whose method names collide with the names the generator derives (`GetOwned` and
//! `DispatchGet` next to `Get`, `New` next to the constructor) compiles, and every derived
//! method keeps a name of its own.
#![allow(clippy::unwrap_used)]

/// `naming.bop` with owned types and async services.
pub mod naming {
    include!("../../rust/tests/expected/variants/naming_async.rs");
}

#[cfg(feature = "rpc")]
#[test]
fn colliding_method_names_get_their_own_methods() {
    use naming::r#type::self_::api;
    // Method ids by declaration: each client method calls its own method.
    let ids = [
        api::GET.id,
        api::GET_OWNED.id,
        api::DISPATCH_GET.id,
        api::NEW.id,
    ];
    let unique: std::collections::BTreeSet<u32> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len());
    // The derived names exist, with a suffix where a method took the plain one (a
    // compile-time check: naming them is enough).
    let _ = api::AsyncClient::get_owned;
    let _ = api::AsyncClient::dispatch_get;
    let _ = api::AsyncClient::dispatch_get_;
    let _ = api::AsyncClient::dispatch_dispatch_get;
    let _ = api::AsyncClient::new_;
    let _ = api::AsyncClient::dispatch_new;
}
