//! The types this image uses, in one place: all generated at build time by `bebop-build`
//! in `target-schema` (from the workloads' schema `benches/workloads/schemas/workloads.bop`,
//! the golden-vector, edge-case and telemetry schemas).

pub use target_schema::benchmark::{JsonValue, Order, Person, TreeNode};
pub use target_schema::edge_cases::{Chain, Event, event};
pub use target_schema::spec::{
    Ints, Magic, NestedInts, Point, Shape, SmallMap, TaggedVector, Text, ThreeLists, UserRequest,
    Words, shape,
};
pub use target_schema::telemetry::{SensorStatus, Telemetry};
