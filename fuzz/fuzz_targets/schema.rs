//! Feeds arbitrary text to the schema compiler (lexer, parser, resolver, validator) as a
//! schema that imports a second arbitrary file, then lowers what compiles to a descriptor set
//! and a plugin request and decodes those back. Nothing may panic, hang or allocate without
//! bound; every error must render.
#![no_main]

use bebop_descriptor::{CodeGeneratorRequest, DescriptorSet};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // The input is two files: `main.bop` and, after the first NUL, `dep.bop`.
    let (main, dep) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let compiler = bebopc::Compiler::new();
    let compilation =
        compiler.compile_in_memory(&[("main.bop", main), ("dep.bop", dep)], &["main.bop"]);
    let _ = compilation.render_terminal(false);
    let _ = compilation.render_json();
    let options = Default::default();
    if let Some(set) = compilation.descriptor_set(&options) {
        let bytes = set.encode_to_vec().expect("a descriptor set encodes");
        let back = DescriptorSet::from_bytes(&bytes).expect("our own descriptor decodes");
        assert_eq!(back.encode_to_vec().expect("re-encodes"), bytes);
    }
    if let Some(request) = compilation.code_generator_request(&options, None, &[]) {
        let bytes = request.encode_to_vec().expect("a request encodes");
        CodeGeneratorRequest::from_bytes(&bytes).expect("our own request decodes");
    }
});
