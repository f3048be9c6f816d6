//! Generated against hand-written encoders and decoders (to be written).
fn main() {}
