//! `bebopc check` and `bebopc build`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bebop_descriptor::CodeGeneratorRequest;
use bebop_plugin_host::{
    Plugin, PluginError, PluginLocator, PluginOutput, RunOptions, write_generated_files,
};
use bebopc::Compilation;
use bebopc::descriptor::{self, DescriptorOptions};

use crate::args::{BuildArgs, CheckArgs, GlobalArgs};
use crate::config::PluginConfig;
use crate::exit;
use crate::project::{self, Project};
use crate::report::Reporter;

/// Prints the diagnostics of a compilation and a summary; returns whether it had errors.
fn report_compilation(result: &Compilation, reporter: &Reporter, global: &GlobalArgs) -> bool {
    reporter.diagnostics(&result.diagnostics, &result.sources);
    let errors = result.errors().count();
    let warnings = if global.no_warn {
        0
    } else {
        result.warnings().count()
    };
    let summary = match (errors, warnings) {
        (0, 0) => "no errors".to_string(),
        (0, w) => format!("{w} warning(s), no errors"),
        (e, 0) => format!("{e} error(s)"),
        (e, w) => format!("{e} error(s), {w} warning(s)"),
    };
    reporter.summary(&summary);
    errors > 0
}

/// `bebopc check`: compile and report.
pub fn check(args: &CheckArgs, global: &GlobalArgs) -> u8 {
    let reporter = Reporter::new(global);
    let project = match project::load(global, &args.input, &reporter) {
        Ok(p) => p,
        Err(e) => {
            reporter.error(&e);
            return exit::USAGE;
        }
    };
    let result = project.compile(&reporter);
    if report_compilation(&result, &reporter, global) {
        exit::SCHEMA_ERRORS
    } else {
        exit::OK
    }
}

/// Sets `key` to `value`, in place when it is already there.
fn set_option(options: &mut Vec<(String, String)>, key: &str, value: &str) {
    match options.iter_mut().find(|(k, _)| k == key) {
        Some(entry) => entry.1 = value.to_string(),
        None => options.push((key.to_string(), value.to_string())),
    }
}

/// The plugins to run: the configuration's, then those of `--NAME_out` (a `--NAME_out` for a
/// configured plugin replaces its directory), with `--plugin NAME=PATH` executables.
fn plugins(args: &BuildArgs, project: &Project, reporter: &Reporter) -> Vec<PluginConfig> {
    let mut plugins: Vec<PluginConfig> = project
        .config
        .as_ref()
        .map(|c| c.plugins.clone())
        .unwrap_or_default();
    for (name, dir) in &args.outs {
        match plugins.iter_mut().find(|p| &p.name == name) {
            Some(p) => p.out = PathBuf::from(dir),
            None => plugins.push(PluginConfig {
                name: name.clone(),
                out: PathBuf::from(dir),
                path: None,
                options: Vec::new(),
            }),
        }
    }
    for (name, path) in &args.plugin {
        match plugins.iter_mut().find(|p| &p.name == name) {
            Some(p) => p.path = Some(PathBuf::from(path)),
            None => reporter.warning(&format!(
                "--plugin {name}={path} is not used: no --{name}_out=DIR and no `{name}` in the configuration's plugins"
            )),
        }
    }
    for (name, _) in &args.params {
        if !plugins.iter().any(|p| &p.name == name) {
            reporter.warning(&format!("--{name}_opt is not used: no --{name}_out=DIR"));
        }
    }
    plugins
}

/// `bebopc build`: compile, write the descriptor set, run the plugins.
pub fn build(args: &BuildArgs, global: &GlobalArgs) -> u8 {
    let reporter = Reporter::new(global);
    let project = match project::load(global, &args.input, &reporter) {
        Ok(p) => p,
        Err(e) => {
            reporter.error(&e);
            return exit::USAGE;
        }
    };
    build_project(args, global, &project, &reporter).status
}

/// What one build did.
#[derive(Debug)]
pub struct BuildRun {
    /// The exit status `bebopc build` would have.
    pub status: u8,
    /// The files the compilation read (the schemas and everything they import, standard
    /// schemas included), as named in its sources: what `bebopc watch` watches.
    pub read: Vec<String>,
}

/// Builds a loaded project: compile, write the descriptor set, run the plugins.
pub fn build_project(
    args: &BuildArgs,
    global: &GlobalArgs,
    project: &Project,
    reporter: &Reporter,
) -> BuildRun {
    let plugins = plugins(args, project, reporter);
    for p in &plugins {
        if p.out.exists() && !p.out.is_dir() {
            reporter.error(&format!(
                "the output of plugin `{}` is not a directory: {}",
                p.name,
                p.out.display()
            ));
            return BuildRun {
                status: exit::USAGE,
                read: project.files.clone(),
            };
        }
    }

    let result = project.compile(reporter);
    let read: Vec<String> = result
        .sources
        .iter()
        .map(|(_, f)| f.path().to_string())
        .collect();
    let status = generate(args, project, &plugins, &result, reporter, global);
    BuildRun { status, read }
}

/// After compiling: the descriptor set and the plugins.
fn generate(
    args: &BuildArgs,
    project: &Project,
    plugins: &[PluginConfig],
    result: &Compilation,
    reporter: &Reporter,
    global: &GlobalArgs,
) -> u8 {
    let had_errors = report_compilation(result, reporter, global);
    let Some(model) = result.model.as_ref().filter(|_| !had_errors) else {
        return exit::SCHEMA_ERRORS;
    };

    let options = DescriptorOptions {
        source_info: args.emit_source_info,
    };
    let set = descriptor::descriptor_set(model, &result.sources, &options);
    let mut status = exit::OK;

    if let Some(path) = &args.desc_out {
        match write_descriptor(path, &set) {
            Ok(len) => reporter.verbose(&format!(
                "wrote the descriptor set to {} ({len} bytes)",
                path.display()
            )),
            Err(e) => {
                reporter.error(&e);
                status = exit::GENERATION;
            }
        }
    }
    if args.desc_out.is_none() && plugins.is_empty() {
        reporter.warning(
            "nothing to generate: give --NAME_out=DIR, --desc_out=FILE, or plugins in bebop.yml",
        );
    }

    let mut global_options: Vec<(String, String)> = project
        .config
        .as_ref()
        .map(|c| c.options.clone())
        .unwrap_or_default();
    for (k, v) in &args.option {
        set_option(&mut global_options, k, v);
    }
    let files = descriptor::files_to_generate(model);
    let locator = PluginLocator::from_env();
    let seconds = args
        .plugin_timeout
        .or(project.config.as_ref().and_then(|c| c.plugin_timeout));
    let run_options = RunOptions {
        timeout: match seconds {
            Some(0) => None,
            Some(s) => Some(Duration::from_secs(s)),
            None => Some(RunOptions::DEFAULT_TIMEOUT),
        },
        max_response_bytes: args
            .plugin_max_response
            .unwrap_or(RunOptions::DEFAULT_MAX_RESPONSE_BYTES),
        ..RunOptions::default()
    };
    for plugin in plugins {
        let mut host_options = global_options.clone();
        for (k, v) in &plugin.options {
            set_option(&mut host_options, k, v);
        }
        let parameter = args
            .params
            .iter()
            .rev()
            .find(|(n, _)| *n == plugin.name)
            .map(|(_, p)| p.clone());
        let request = descriptor::request_from_set(&set, files.clone(), parameter, &host_options);
        if !run_plugin(plugin, &request, &locator, result, reporter, &run_options) {
            status = exit::GENERATION;
        }
    }
    status
}

fn write_descriptor(path: &Path, set: &bebop_descriptor::DescriptorSet) -> Result<usize, String> {
    let bytes = set
        .to_vec()
        .map_err(|e| format!("cannot encode the descriptor set: {e}"))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(bytes.len())
}

/// The name of the generator built into `bebopc`: `--rust_out=DIR` runs
/// `bebop-codegen-rust` in-process unless an executable is given for it (`--plugin rust=PATH`
/// or `path:` in the configuration), in which case that executable runs as any plugin does.
pub const BUILT_IN_RUST: &str = "rust";

/// Runs the built-in Rust generator on `request` as the `bebopc-gen-rust` plugin would run:
/// the request goes through its wire encoding (so the generator sees exactly the bytes a
/// plugin would read), and the response is handled like a plugin's (`error` set: a
/// [`PluginError::Reported`]).
fn run_built_in_rust(request: &CodeGeneratorRequest) -> Result<PluginOutput, PluginError> {
    fn io_error(
        action: &'static str,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> PluginError {
        PluginError::Io {
            plugin: BUILT_IN_RUST.to_string(),
            action,
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        }
    }
    let bytes = request
        .to_vec()
        .map_err(|e| io_error("encoding the request", e))?;
    let request = CodeGeneratorRequest::from_bytes(&bytes)
        .map_err(|e| io_error("decoding the request", e))?;
    let response = bebop_codegen_rust::respond(&request);
    let diagnostics = response.diagnostics.unwrap_or_default();
    if let Some(message) = response.error.filter(|m| !m.is_empty()) {
        return Err(PluginError::Reported {
            plugin: BUILT_IN_RUST.to_string(),
            message,
            diagnostics,
        });
    }
    Ok(PluginOutput {
        files: response.files.unwrap_or_default(),
        diagnostics,
        stderr: String::new(),
    })
}

/// Runs one plugin (or the built-in Rust generator) and writes its files; returns whether it
/// succeeded.
fn run_plugin(
    plugin: &PluginConfig,
    request: &bebop_descriptor::CodeGeneratorRequest,
    locator: &PluginLocator,
    result: &Compilation,
    reporter: &Reporter,
    run_options: &RunOptions,
) -> bool {
    let name = plugin.name.as_str();
    let ran = if name == BUILT_IN_RUST && plugin.path.is_none() {
        reporter.verbose(&format!(
            "running the built-in Rust generator (bebop-codegen-rust) into {}",
            plugin.out.display()
        ));
        run_built_in_rust(request)
    } else {
        let path = match locator.locate(name, plugin.path.as_deref()) {
            Ok(p) => p,
            Err(e) => {
                reporter.error(&e.to_string());
                return false;
            }
        };
        reporter.verbose(&format!(
            "running plugin `{name}` ({}) into {}",
            path.display(),
            plugin.out.display()
        ));
        Plugin::new(name, &path).run(request, run_options)
    };
    let output = match ran {
        Ok(o) => o,
        Err(e) => {
            if let PluginError::Reported { diagnostics, .. } = &e {
                reporter.plugin_diagnostics(name, diagnostics, &result.sources);
            }
            // Exited and TimedOut carry the plugin's stderr in their message.
            reporter.error(&e.to_string());
            return false;
        }
    };
    let errors = reporter.plugin_diagnostics(name, &output.diagnostics, &result.sources);
    if errors > 0 {
        reporter.plugin_stderr(name, &output.stderr);
        reporter.error(&format!(
            "plugin `{name}` reported {errors} error(s); its files were not written"
        ));
        return false;
    }
    if reporter.is_verbose() {
        reporter.plugin_stderr(name, &output.stderr);
    }
    match write_generated_files(&plugin.out, name, &output.files) {
        Ok(written) => {
            for w in &written {
                reporter.verbose(&format!("  wrote {}", w.display()));
            }
            reporter.summary(&format!(
                "{name}: {} file(s) written to {}",
                written.len(),
                plugin.out.display()
            ));
            true
        }
        Err(e) => {
            reporter.error(&e.to_string());
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_override_in_place() {
        let mut o = vec![
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2".to_string()),
        ];
        set_option(&mut o, "a", "3");
        set_option(&mut o, "c", "4");
        assert_eq!(
            o,
            vec![
                ("a".into(), "3".into()),
                ("b".into(), "2".into()),
                ("c".into(), "4".into())
            ]
        );
    }
}
