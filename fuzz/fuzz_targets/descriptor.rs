//! Feeds arbitrary bytes to the descriptor and plugin decoders (what a plugin reads from
//! bebopc, and what bebopc reads back from a plugin); whatever decodes must re-encode to bytes
//! that decode and encode to the same bytes.
#![no_main]

use bebop_descriptor::{CodeGeneratorRequest, CodeGeneratorResponse, DescriptorSet};

macro_rules! check {
    ($t:ty, $data:expr) => {
        if let Ok(value) = <$t>::from_bytes($data) {
            let bytes = value.encode_to_vec().expect("a decoded value encodes");
            let again = <$t>::from_bytes(&bytes).expect("re-encoded bytes decode");
            // Bytes, not values: a float constant may be NaN.
            assert_eq!(again.encode_to_vec().expect("encodes again"), bytes);
        }
    };
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    check!(DescriptorSet, data);
    check!(CodeGeneratorRequest, data);
    check!(CodeGeneratorResponse, data);
});
