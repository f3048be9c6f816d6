//! `bebopc-gen-testplugin`: a small code generator plugin for the command line's end-to-end
//! tests.
//!
//! Its mode comes from the host option `mode` (`-D mode=crash`) or else from its file name
//! (`bebopc-gen-crash` runs the `crash` mode), default `echo`:
//!
//! - `echo`: writes `request.txt` (the request's files, parameter, host options, compiler
//!   version and schema paths), `definitions.txt` (one fully qualified name per definition of
//!   the files to generate, between the insertion points `top` and `bottom`, sent in two
//!   chunks) and fills `bottom` itself; reports a warning on the first definition of the
//!   first file (at its source position when the request carries source info, else line 1)
//!   and an info note;
//! - `insert`: only inserts a line at `top` of `definitions.txt` (an earlier plugin's file);
//! - `crash`: writes to stderr and exits with status 3;
//! - `error`: sets the response's `error`, with an error diagnostic;
//! - `diag-error`: a normal response plus an error diagnostic;
//! - `evil`: a file named `../escape.txt`;
//! - `garbage`: stdout that is not a response;
//! - `hang`: never answers nor exits (after reading the request);
//! - `rust`: answers with `bebop_codegen_rust::respond`, as `bebopc-gen-rust` does: the
//!   tests compare bebopc's built-in Rust generator with the same code run as a plugin.

use std::io::{Read, Write};

use bebop_descriptor::{
    CodeGeneratorRequest, CodeGeneratorResponse, DefinitionDescriptor, Diagnostic,
    DiagnosticSeverity, GeneratedFile,
};

fn file(name: Option<&str>, point: Option<&str>, content: String) -> GeneratedFile {
    GeneratedFile {
        name: name.map(Into::into),
        insertion_point: point.map(Into::into),
        content: Some(content),
        generated_code_info: None,
    }
}

fn diagnostic(
    severity: DiagnosticSeverity,
    text: &str,
    file: Option<&str>,
    span: Option<[i32; 4]>,
) -> Diagnostic {
    Diagnostic {
        severity: Some(severity),
        text: Some(text.into()),
        hint: Some(format!("hint for: {text}")),
        file: file.map(Into::into),
        span,
    }
}

fn collect(defs: &[DefinitionDescriptor], out: &mut Vec<String>) {
    for d in defs {
        out.push(d.fqn.clone().unwrap_or_default());
        collect(d.nested.as_deref().unwrap_or_default(), out);
    }
}

fn main() {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("testplugin: cannot read stdin: {e}");
        std::process::exit(1);
    }
    let request = match CodeGeneratorRequest::from_bytes(&input) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("testplugin: bad request: {e}");
            std::process::exit(1);
        }
    };
    let from_name = std::env::args_os()
        .next()
        .and_then(|a| {
            let stem = std::path::Path::new(&a).file_stem()?.to_str()?.to_string();
            stem.strip_prefix("bebopc-gen-").map(str::to_string)
        })
        .unwrap_or_default();
    let mode = request
        .host_option("mode")
        .map(str::to_string)
        .unwrap_or(from_name);
    let files = request.files_to_generate.clone().unwrap_or_default();
    let first_file = files.first().map(String::as_str);
    // The first definition's position, from the source info when there is some.
    let first_span = request
        .schemas
        .iter()
        .flatten()
        .find(|s| s.path.as_deref() == first_file)
        .and_then(|s| s.source_code_info.as_ref())
        .and_then(|i| i.locations.as_ref())
        .and_then(|l| l.first())
        .and_then(|l| l.span)
        .unwrap_or([1, 1, 1, 2]);

    let mut response = CodeGeneratorResponse::default();
    match mode.as_str() {
        "crash" => {
            eprintln!(
                "testplugin: simulated crash while generating {}",
                files.join(", ")
            );
            std::process::exit(3);
        }
        "garbage" => {
            let _ = std::io::stdout().write_all(b"this is not a response");
            return;
        }
        "hang" => {
            eprintln!("testplugin: hanging on purpose");
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        "error" => {
            response.error = Some("these schemas are not supported".into());
            response.diagnostics = Some(vec![diagnostic(
                DiagnosticSeverity::Error,
                "unsupported definition",
                first_file,
                Some(first_span),
            )]);
        }
        "evil" => {
            response.files = Some(vec![file(Some("../escape.txt"), None, "escaped".into())]);
        }
        "rust" => response = bebop_codegen_rust::respond(&request),
        "insert" => {
            response.files = Some(vec![file(
                Some("definitions.txt"),
                Some("top"),
                "inserted at top by a second plugin\n".into(),
            )]);
        }
        _ => {
            let mut text = String::new();
            text.push_str(&format!("files={}\n", files.join(",")));
            text.push_str(&format!(
                "parameter={}\n",
                request.parameter.as_deref().unwrap_or("(none)")
            ));
            for (k, v) in request.host_options.iter().flatten() {
                text.push_str(&format!("option {k}={v}\n"));
            }
            if let Some(v) = &request.compiler_version {
                text.push_str(&format!(
                    "version={}.{}.{}-{}\n",
                    v.major, v.minor, v.patch, v.suffix
                ));
            }
            for s in request.schemas.iter().flatten() {
                text.push_str(&format!(
                    "schema {} source_info={}\n",
                    s.path.as_deref().unwrap_or("?"),
                    s.source_code_info.is_some()
                ));
            }
            let mut fqns = Vec::new();
            for s in request.schemas.iter().flatten() {
                if files.iter().any(|f| Some(f.as_str()) == s.path.as_deref()) {
                    collect(s.definitions.as_deref().unwrap_or_default(), &mut fqns);
                }
            }
            let (head, tail) = fqns.split_at(fqns.len() / 2);
            let mut first = String::from("// @@bebopc_insertion_point(top)\n");
            for f in head {
                first.push_str(f);
                first.push('\n');
            }
            let mut second = String::new();
            for f in tail {
                second.push_str(f);
                second.push('\n');
            }
            second.push_str("// @@bebopc_insertion_point(bottom)\n");
            response.files = Some(vec![
                file(Some("request.txt"), None, text),
                file(Some("definitions.txt"), None, first),
                file(None, None, second),
                file(
                    Some("definitions.txt"),
                    Some("bottom"),
                    "inserted at bottom\n".into(),
                ),
            ]);
            let mut diags = vec![
                diagnostic(
                    DiagnosticSeverity::Warning,
                    "first definition seen",
                    first_file,
                    Some(first_span),
                ),
                diagnostic(
                    DiagnosticSeverity::Info,
                    "generated by the test plugin",
                    None,
                    None,
                ),
            ];
            if mode == "diag-error" {
                diags.push(diagnostic(
                    DiagnosticSeverity::Error,
                    "cannot generate this",
                    first_file,
                    Some(first_span),
                ));
            }
            response.diagnostics = Some(diags);
        }
    }
    let bytes = match response.to_vec() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("testplugin: cannot encode the response: {e}");
            std::process::exit(1);
        }
    };
    let mut out = std::io::stdout().lock();
    if out.write_all(&bytes).and_then(|()| out.flush()).is_err() {
        std::process::exit(1);
    }
}
