//! The plugin protocol: a [`CodeGeneratorRequest`] in, a [`CodeGeneratorResponse`] out.

use bebop_descriptor::{
    CodeGeneratorRequest, CodeGeneratorResponse, Diagnostic, DiagnosticSeverity, GeneratedFile,
};

use crate::{Generator, Options};

/// Answers a plugin request: options from the request's `host_options` (keys `rust.*`)
/// and then its `parameter` (which wins), code for `files_to_generate`. Problems with the
/// schemas or options go into the response's `error` field, as the plugin protocol asks;
/// warnings become diagnostics.
///
/// ```
/// use bebop_descriptor::CodeGeneratorRequest;
///
/// let request = CodeGeneratorRequest {
///     parameter: Some("colour=blue".into()),
///     ..Default::default()
/// };
/// let response = bebop_codegen_rust::respond(&request);
/// assert!(response.error.unwrap().contains("unknown option"));
/// ```
pub fn respond(request: &CodeGeneratorRequest) -> CodeGeneratorResponse {
    let mut options = Options::default();
    let configured = options
        .apply_host_options(
            request
                .host_options
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .and_then(|()| options.apply_parameter(request.parameter.as_deref().unwrap_or("")));
    let result =
        configured.and_then(|()| Generator::with_options(options).generate_request(request));
    match result {
        Ok(code) => CodeGeneratorResponse {
            error: None,
            files: Some(
                code.files
                    .into_iter()
                    .map(|f| GeneratedFile {
                        name: Some(f.name),
                        insertion_point: None,
                        content: Some(f.content),
                        generated_code_info: None,
                    })
                    .collect(),
            ),
            diagnostics: (!code.warnings.is_empty()).then(|| {
                code.warnings
                    .into_iter()
                    .map(|text| Diagnostic {
                        severity: Some(DiagnosticSeverity::Warning),
                        text: Some(text),
                        ..Default::default()
                    })
                    .collect()
            }),
        },
        Err(e) => CodeGeneratorResponse {
            error: Some(e.to_string()),
            files: None,
            diagnostics: None,
        },
    }
}
