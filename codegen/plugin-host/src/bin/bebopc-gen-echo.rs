//! `bebopc-gen-echo`: a small code generator plugin for the plugin host's tests, and an
//! example of a plugin written in Rust.
//!
//! It reads a `CodeGeneratorRequest` from stdin and answers with:
//! - `definitions.txt`: one line `FQN KIND` per definition of the schemas to generate
//!   (nested ones included), written in two chunks (the second has no name);
//! - `summary.txt`: the request's files, compiler version and parameter, with an insertion
//!   point `extra` that a later entry of the same response fills;
//! - `nested/dir/info.txt`, to exercise directory creation;
//! - a warning diagnostic.
//!
//! Its behaviour comes from its own file name, `bebopc-gen-MODE`, so the tests can install it
//! under several names: `echo` (the above), `insert` (only an insertion into `summary.txt` at
//! `later`), `crash` (stderr and exit status 3), `garbage` (stdout that is not a response),
//! `empty` (no output), `evil` (a file named `../evil.txt`), `absolute` (`/tmp/...`),
//! `error` (the response's `error` field), `missing-point` (an insertion at an unknown point),
//! `flood` (endless stdout), `hang` (never exits), `linger` (closes stdout, never exits),
//! `orphan` (leaves a process holding stdout behind and exits), `bigwrite` (writes a 4 MiB
//! response before reading its input).

use std::io::{Read, Write};

use bebop_descriptor::{
    CodeGeneratorRequest, CodeGeneratorResponse, Diagnostic, DiagnosticSeverity, GeneratedFile,
};

fn main() {
    let mode = std::env::args_os()
        .next()
        .and_then(|arg0| {
            let stem = std::path::Path::new(&arg0)
                .file_stem()?
                .to_str()?
                .to_string();
            stem.strip_prefix("bebopc-gen-").map(str::to_string)
        })
        .unwrap_or_else(|| "echo".to_string());
    let code = match run(&mode) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("bebopc-gen-{mode}: {e}");
            1
        }
    };
    std::process::exit(code);
}

/// Closes the stdout pipe for real while the process goes on: file descriptor 1 becomes
/// `/dev/null` (dropping std's `Stdout` handle does not close it).
fn close_stdout() {
    #[cfg(unix)]
    if let Ok(null) = std::fs::File::create("/dev/null") {
        let _ = rustix::stdio::dup2_stdout(&null);
    }
}

fn file(name: Option<&str>, point: Option<&str>, content: String) -> GeneratedFile {
    GeneratedFile {
        name: name.map(Into::into),
        insertion_point: point.map(Into::into),
        content: Some(content),
        generated_code_info: None,
    }
}

fn respond(response: &CodeGeneratorResponse) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = response.to_vec()?;
    let mut out = std::io::stdout().lock();
    out.write_all(&bytes)?;
    out.flush()?;
    Ok(())
}

fn read_request() -> Result<CodeGeneratorRequest, Box<dyn std::error::Error>> {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;
    Ok(CodeGeneratorRequest::from_bytes(&input)?)
}

fn run(mode: &str) -> Result<(), Box<dyn std::error::Error>> {
    match mode {
        "hang" => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        "linger" => {
            // Closes stdout at once (an empty response) and keeps running.
            close_stdout();
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        "orphan" => {
            // Starts a process that inherits stdout and stderr and outlives the plugin, says
            // its pid on stderr, and exits without answering.
            let child = std::process::Command::new("sleep").arg("3600").spawn()?;
            eprintln!("orphan pid {}", child.id());
            return Ok(());
        }
        "flood" => {
            let chunk = vec![0u8; 1 << 16];
            let mut out = std::io::stdout().lock();
            // Stops when the host closes the pipe.
            while out.write_all(&chunk).is_ok() {}
            return Ok(());
        }
        "bigwrite" => {
            // Answer first, read afterwards: a host that writes the whole request before
            // reading stdout would deadlock with this plugin once both pipes are full.
            let content = "x".repeat(4 << 20);
            respond(&CodeGeneratorResponse {
                files: Some(vec![file(Some("big.txt"), None, content)]),
                ..Default::default()
            })?;
            let request = read_request()?;
            eprintln!(
                "read a request with parameter of {} bytes",
                request.parameter.unwrap_or_default().len()
            );
            return Ok(());
        }
        _ => {}
    }

    let request = read_request()?;
    let response = match mode {
        "crash" => {
            for i in 0..2000 {
                eprintln!("diagnostic noise line {i}");
            }
            eprintln!("fatal: the echo plugin crashed on purpose");
            std::process::exit(3);
        }
        "garbage" => {
            std::io::stdout().write_all(b"this is not a bebop message")?;
            return Ok(());
        }
        "empty" => return Ok(()),
        "evil" => CodeGeneratorResponse {
            files: Some(vec![
                file(Some("fine.txt"), None, "ok".into()),
                file(Some("../evil.txt"), None, "escaped".into()),
            ]),
            ..Default::default()
        },
        "absolute" => CodeGeneratorResponse {
            files: Some(vec![file(
                Some("/tmp/bebopc-gen-absolute.txt"),
                None,
                "x".into(),
            )]),
            ..Default::default()
        },
        "error" => CodeGeneratorResponse {
            error: Some("schema uses a feature this generator does not support".into()),
            diagnostics: Some(vec![Diagnostic {
                severity: Some(DiagnosticSeverity::Error),
                text: Some("unsupported".into()),
                ..Default::default()
            }]),
            ..Default::default()
        },
        "missing-point" => CodeGeneratorResponse {
            files: Some(vec![
                file(Some("a.txt"), None, "no markers here\n".into()),
                file(Some("a.txt"), Some("nowhere"), "lost\n".into()),
            ]),
            ..Default::default()
        },
        "insert" => CodeGeneratorResponse {
            files: Some(vec![file(
                Some("summary.txt"),
                Some("later"),
                "inserted by a second plugin\n".into(),
            )]),
            ..Default::default()
        },
        _ => echo(&request),
    };
    respond(&response)
}

fn echo(request: &CodeGeneratorRequest) -> CodeGeneratorResponse {
    let mut listing = String::new();
    for schema in request.schemas_to_generate() {
        for entry in schema.all_definitions() {
            listing.push_str(&format!("{} {:?}\n", entry.fqn, entry.definition.kind()));
        }
    }
    let split = listing.len() / 2;
    let split = (split..=listing.len())
        .find(|&i| listing.is_char_boundary(i))
        .unwrap_or(listing.len());
    let (first, second) = listing.split_at(split);

    let version = request
        .compiler_version
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    let files = request
        .files_to_generate
        .clone()
        .unwrap_or_default()
        .join(", ");
    let summary = format!(
        "files: {files}\ncompiler: {version}\nparameter: {}\n\
         // @@bebopc_insertion_point(extra)\n\
         # @@bebopc_insertion_point(later)\n\
         end\n",
        request.parameter.as_deref().unwrap_or("(none)")
    );
    CodeGeneratorResponse {
        error: None,
        files: Some(vec![
            file(Some("definitions.txt"), None, first.to_string()),
            file(None, None, second.to_string()),
            file(Some("summary.txt"), None, summary),
            file(
                Some("nested/dir/info.txt"),
                None,
                "made by bebopc-gen-echo\n".into(),
            ),
            file(
                Some("summary.txt"),
                Some("extra"),
                format!("schemas: {}\n", request.schema_list().len()),
            ),
        ]),
        diagnostics: Some(vec![Diagnostic {
            severity: Some(DiagnosticSeverity::Warning),
            text: Some(format!("echoed {} definitions", listing.lines().count())),
            hint: Some("this plugin only lists definitions".into()),
            file: request
                .files_to_generate
                .as_ref()
                .and_then(|f| f.first().cloned()),
            span: Some([1, 1, 1, 1]),
        }]),
    }
}
