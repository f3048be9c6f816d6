//! The command line: clap definitions, plus the two things clap cannot express and that
//! users of the reference compiler rely on:
//!
//! - `--NAME_out=DIR` (or `--NAME_out DIR`) for any plugin `NAME`, and `--NAME_opt=PARAM`
//!   (the plugin's `parameter`, as `docs/plugins.md` describes), taken out of the arguments
//!   before clap sees them ([`extract_plugin_flags`]); `--desc_out` is the compiler's own,
//!   and `--rust_out` runs the built-in Rust generator unless `--plugin rust=PATH` is given
//!   (`crate::build::BUILT_IN_RUST`);
//! - `bebopc FILE.bop ...` without a command means `bebopc build FILE.bop ...`
//!   ([`insert_implicit_build`]).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

const AFTER_HELP: &str = "\
Plugins: `--NAME_out=DIR` runs the code generator `bebopc-gen-NAME` (found next to bebopc or on
PATH, or given with `--plugin NAME=PATH`) and writes what it generates into DIR;
`--NAME_opt=PARAM` sets the plugin's parameter. Options set with -D reach every plugin.

Rust: the Rust generator is built in. `--rust_out=DIR` runs it inside bebopc, with the same
request, `--rust_opt` parameter and -D options (`rust.KEY=VALUE`) that the `bebopc-gen-rust`
plugin would get, and writes the same files; no plugin needs to be installed. Give
`--plugin rust=PATH` (or `path:` under `rust` in bebop.yml) to run an external executable
instead. Parameter keys: runtime, owned, owned_cfg, map, defmt, rustfmt, file
(e.g. `--rust_opt=runtime=::bebop_runtime,owned=true`).

Configuration: `bebop.yml` (or `-c FILE`, YAML or JSON) in the working directory or a parent
gives `sources`, `exclude`, `include`, `plugins` (NAME: DIR), `options` and `format` (the
layout of `bebopc fmt`: `{ indent: 4, line_width: 100 }`).

Exit status: 0 success, 1 errors in the schemas (or `init` refusing to overwrite, or files
`fmt --check` would change), 2 usage or configuration errors, 3 code generation failed (a
plugin missing, crashing or reporting an error, or output that cannot be written).";

/// `bebopc`: the Bebop schema compiler.
#[derive(Parser, Debug)]
#[command(name = "bebopc", version, about = "The Bebop schema compiler", after_help = AFTER_HELP)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options accepted before or after the command.
#[derive(Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Configuration file (YAML or JSON); default: bebop.yml in the working directory or
    /// the nearest parent that has one.
    #[arg(short = 'c', long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// When to colour diagnostics (auto: only when stderr is a terminal).
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,
    /// How to print diagnostics: for people, or one JSON object per line on stdout.
    #[arg(long, global = true, value_enum, default_value_t = FormatArg::Terminal, value_name = "FORMAT")]
    pub format: FormatArg,
    /// Say what is being done (files, plugins, outputs).
    #[arg(short = 'v', long, global = true, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Print only errors.
    #[arg(short = 'q', long, global = true)]
    pub quiet: bool,
    /// Do not print warnings.
    #[arg(long, global = true)]
    pub no_warn: bool,
    /// Print at most this many errors (the rest are counted: "and N more"); 0 for all.
    #[arg(long, global = true, default_value_t = 100, value_name = "N")]
    pub max_errors: usize,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile schemas, write the descriptor set and run code generator plugins.
    #[command(
        after_help = "Examples:\n  bebopc build schema.bop --desc_out=schema.desc\n  \
        bebopc build schema.bop --rust_out=src/generated -I shared\n  \
        bebopc build schema.bop --rust_out=gen --rust_opt=runtime=::bebop_runtime,owned=true\n  \
        bebopc build --plugin custom=./my-gen schema.bop --custom_out=out\n\n\
        `--rust_out` runs the Rust generator built into bebopc (no plugin needed) unless\n\
        `--plugin rust=PATH` names an executable."
    )]
    Build(BuildArgs),
    /// Parse and validate schemas without generating anything.
    Check(CheckArgs),
    /// Rewrite schemas in the canonical layout (comments and meaning are kept).
    #[command(
        after_help = "Examples:\n  bebopc fmt                        # the configuration's sources, in place\n  \
        bebopc fmt schemas/*.bop --check  # exit 1 and print a diff if any would change\n  \
        bebopc fmt --stdin < a.bop > b.bop\n\n\
        Layout: `format: { indent: 4, line_width: 100 }` in bebop.yml, or --indent and\n\
        --line-width. A file with syntax errors is reported (exit 1) and left as it is."
    )]
    Fmt(FmtArgs),
    /// Build, then build again whenever a schema, an import or the configuration changes.
    #[command(
        after_help = "Takes the options of `bebopc build` (--NAME_out=DIR, --desc_out, -I, ...).\n\
        Watches the schemas and everything they import, the directories the `sources`\n\
        globs start in, and the configuration file; changes within --debounce\n\
        milliseconds make one rebuild. Errors are reported and watching goes on; Ctrl-C\n\
        (or SIGTERM) stops it after the build in progress, with exit status 0."
    )]
    Watch(WatchArgs),
    /// Run the Language Server (LSP over standard input and output) for editors.
    #[command(
        after_help = "Speaks the Language Server Protocol on stdin/stdout: diagnostics as you type,\n\
        hover, go to definition, references, rename, document symbols, completion and\n\
        formatting. The workspace is the editor's root folder (or the directory of its\n\
        bebop.yml, whose `include` directories are used for imports)."
    )]
    Lsp,
    /// Create a starter bebop.yml and schema in the working directory.
    Init,
    /// Print a shell completion script.
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
}

/// Which schemas to read.
#[derive(Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// Schema files or glob patterns (default: the configuration's `sources`).
    #[arg(value_name = "FILES")]
    pub files: Vec<String>,
    /// Directory in which imports are searched (repeatable, searched in order).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Leave out files matching this glob (repeatable).
    #[arg(short = 'x', long = "exclude", value_name = "GLOB")]
    pub exclude: Vec<String>,
}

/// `bebopc check`.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// The schemas.
    #[command(flatten)]
    pub input: InputArgs,
}

/// `bebopc build`.
#[derive(Args, Debug, Clone)]
pub struct BuildArgs {
    /// The schemas.
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the DescriptorSet (Bebop-encoded `bebop/descriptor.bop`) to this file.
    #[arg(long = "desc_out", visible_alias = "desc-out", value_name = "FILE")]
    pub desc_out: Option<PathBuf>,
    /// Use this executable for plugin NAME (repeatable). For `rust` this replaces the
    /// built-in Rust generator.
    #[arg(long = "plugin", value_name = "NAME=PATH", value_parser = parse_key_value)]
    pub plugin: Vec<(String, String)>,
    /// Set an option passed to every plugin in the request's host_options (repeatable).
    #[arg(short = 'D', long = "option", value_name = "KEY=VAL", value_parser = parse_key_value)]
    pub option: Vec<(String, String)>,
    /// Include source positions and comments in descriptors.
    #[arg(long)]
    pub emit_source_info: bool,
    /// Kill a plugin (and every process it started) that has not finished after this many
    /// seconds; 0 for no limit. Default: `plugin_timeout` of bebop.yml, or 60.
    #[arg(long = "plugin-timeout", value_name = "SECONDS")]
    pub plugin_timeout: Option<u64>,
    /// The most bytes a plugin may write as its response; past it the plugin is killed and
    /// the build fails (nothing beyond the limit is buffered). Default: 1 GiB.
    #[arg(long = "plugin-max-response", value_name = "BYTES")]
    pub plugin_max_response: Option<u64>,
    /// `--NAME_out=DIR` flags, in order (filled by [`extract_plugin_flags`]).
    #[arg(skip)]
    pub outs: Vec<(String, String)>,
    /// `--NAME_opt=PARAM` flags (filled by [`extract_plugin_flags`]).
    #[arg(skip)]
    pub params: Vec<(String, String)>,
}

/// `bebopc fmt`.
#[derive(Args, Debug, Clone)]
pub struct FmtArgs {
    /// Schema files or glob patterns (default: the configuration's `sources`).
    #[arg(value_name = "FILES")]
    pub files: Vec<String>,
    /// Leave out files matching this glob (repeatable).
    #[arg(short = 'x', long = "exclude", value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Change no file: print a unified diff (on stdout) for each file that is not formatted,
    /// and exit with status 1 if there is one.
    #[arg(long)]
    pub check: bool,
    /// Read one schema from standard input and write it formatted to standard output.
    #[arg(long, conflicts_with = "files")]
    pub stdin: bool,
    /// Spaces per indentation level (default: `format.indent` of bebop.yml, or 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=16))]
    pub indent: Option<u8>,
    /// Wrap decorator arguments past this line width (default: `format.line_width` of
    /// bebop.yml, or 100).
    #[arg(long = "line-width", value_name = "N")]
    pub line_width: Option<usize>,
}

/// `bebopc watch`.
#[derive(Args, Debug, Clone)]
pub struct WatchArgs {
    /// What each build does, as `bebopc build` takes it.
    #[command(flatten)]
    pub build: BuildArgs,
    /// Milliseconds without a further change before rebuilding.
    #[arg(long, value_name = "MS", default_value_t = 150)]
    pub debounce: u64,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour when stderr is a terminal (and `NO_COLOR` is not set).
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Human-readable, with source snippets, on stderr.
    Terminal,
    /// One JSON object per line on stdout.
    Json,
}

fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("expected KEY=VALUE, got `{s}`")),
    }
}

/// Plugin flags found in the arguments.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PluginFlags {
    /// `(NAME, DIR)` of each `--NAME_out`, in order.
    pub outs: Vec<(String, String)>,
    /// `(NAME, PARAM)` of each `--NAME_opt`, in order.
    pub params: Vec<(String, String)>,
}

/// Whether `name` can be a plugin name: ASCII letters, digits, `_` and `-`.
pub fn is_plugin_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Takes `--NAME_out[=]DIR` and `--NAME_opt[=]PARAM` out of `args` (up to a `--`), returning
/// the rest and the flags. `--desc_out` stays for clap. A flag without its value is an error.
pub fn extract_plugin_flags(args: Vec<OsString>) -> Result<(Vec<OsString>, PluginFlags), String> {
    let mut rest = Vec::with_capacity(args.len());
    let mut flags = PluginFlags::default();
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        let Some(text) = arg.to_str() else {
            rest.push(arg);
            continue;
        };
        if text == "--" {
            rest.push(arg);
            rest.extend(iter);
            break;
        }
        let Some(flag) = text.strip_prefix("--") else {
            rest.push(arg);
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        let (plugin, list) = if let Some(p) = name.strip_suffix("_out") {
            (p, &mut flags.outs)
        } else if let Some(p) = name.strip_suffix("_opt") {
            (p, &mut flags.params)
        } else {
            rest.push(arg);
            continue;
        };
        if name == "desc_out" || !is_plugin_name(plugin) {
            rest.push(arg);
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => match iter.next() {
                Some(v) => v
                    .into_string()
                    .map_err(|_| format!("the value of --{name} is not valid UTF-8"))?,
                None => return Err(format!("--{name} needs a value (--{name}=VALUE)")),
            },
        };
        if value.is_empty() && name.ends_with("_out") {
            return Err(format!("--{name} needs a directory"));
        }
        list.push((plugin.to_string(), value));
    }
    Ok((rest, flags))
}

const COMMANDS: &[&str] = &[
    "build",
    "check",
    "fmt",
    "watch",
    "lsp",
    "init",
    "completion",
    "help",
];

/// `bebopc schema.bop --c_out=gen` means `bebopc build schema.bop --c_out=gen`: when the first
/// argument that is not an option is not a command but looks like a path (it has a `.`, `/`
/// or `\`), `build` is inserted before it, as the reference compiler does.
pub fn insert_implicit_build(mut args: Vec<OsString>) -> Vec<OsString> {
    let mut i = 1;
    while i < args.len() {
        let Some(text) = args[i].to_str() else {
            return args;
        };
        if text == "--" {
            return args;
        }
        if text.starts_with('-') && text.len() > 1 {
            // Global options that take a separate value.
            if matches!(text, "-c" | "--config" | "--color" | "--format") {
                i += 1;
            }
            i += 1;
            continue;
        }
        if !COMMANDS.contains(&text) && text.contains(['.', '/', '\\']) {
            args.insert(i, OsString::from("build"));
        }
        return args;
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn plugin_flags_are_taken_out() {
        let (rest, flags) = extract_plugin_flags(os(&[
            "bebopc",
            "build",
            "a.bop",
            "--c_out=gen/c",
            "--ts_out",
            "gen/ts",
            "--desc_out=x.desc",
            "--rust_opt=serde",
            "-I",
            "inc",
        ]))
        .unwrap();
        assert_eq!(
            rest,
            os(&["bebopc", "build", "a.bop", "--desc_out=x.desc", "-I", "inc"])
        );
        assert_eq!(
            flags.outs,
            vec![("c".into(), "gen/c".into()), ("ts".into(), "gen/ts".into())]
        );
        assert_eq!(flags.params, vec![("rust".into(), "serde".into())]);
    }

    #[test]
    fn plugin_flag_without_value_is_an_error() {
        let err = extract_plugin_flags(os(&["bebopc", "build", "--c_out"])).unwrap_err();
        assert!(err.contains("--c_out needs a value"), "{err}");
        assert!(extract_plugin_flags(os(&["bebopc", "build", "--c_out="])).is_err());
    }

    #[test]
    fn arguments_after_double_dash_are_left_alone() {
        let (rest, flags) =
            extract_plugin_flags(os(&["bebopc", "build", "--", "--c_out=x"])).unwrap();
        assert_eq!(rest.len(), 4);
        assert!(flags.outs.is_empty());
    }

    #[test]
    fn implicit_build() {
        assert_eq!(
            insert_implicit_build(os(&["bebopc", "-c", "cfg.yml", "a.bop"])),
            os(&["bebopc", "-c", "cfg.yml", "build", "a.bop"])
        );
        assert_eq!(
            insert_implicit_build(os(&["bebopc", "check", "a.bop"])),
            os(&["bebopc", "check", "a.bop"])
        );
        assert_eq!(
            insert_implicit_build(os(&["bebopc", "nonsense"])),
            os(&["bebopc", "nonsense"])
        );
    }

    #[test]
    fn key_values() {
        assert_eq!(parse_key_value("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert!(parse_key_value("novalue").is_err());
        assert!(parse_key_value("=x").is_err());
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
