//! Compile-time descriptions of RPC services, for generated code and the RPC layers.

/// How a method streams, per the `stream` keywords of its declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MethodKind {
    /// `M(Req): Res` — one request, one response.
    Unary,
    /// `M(Req): stream Res` — one request, many responses.
    ServerStream,
    /// `M(stream Req): Res` — many requests, one response.
    ClientStream,
    /// `M(stream Req): stream Res` — both sides stream.
    DuplexStream,
}

/// A service method as generated code describes it.
///
/// ```
/// use bebop_core::{MethodInfo, MethodKind, method_id};
///
/// const SAY_HELLO: MethodInfo = MethodInfo::new("GreeterService", "SayHello", MethodKind::Unary);
/// assert_eq!(SAY_HELLO.id, method_id("/GreeterService/SayHello"));
/// assert_eq!(SAY_HELLO.id, 0x4d62_beb5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MethodInfo {
    /// The service's name as declared (without package).
    pub service: &'static str,
    /// The method's name as declared.
    pub name: &'static str,
    /// The routing id: [`method_id`](crate::method_id) of `/service/name`.
    pub id: u32,
    /// How the method streams.
    pub kind: MethodKind,
}

impl MethodInfo {
    /// Describes `service`'s method `name`, computing its id.
    pub const fn new(service: &'static str, name: &'static str, kind: MethodKind) -> Self {
        MethodInfo {
            service,
            name,
            id: crate::method_id::method_id_parts(service, name),
            kind,
        }
    }
}
