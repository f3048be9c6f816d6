//! The `bebopc` command line.
//!
//! ```text
//! bebopc check FILES... [-I DIR]... [--format terminal|json] [--color auto|always|never]
//!                       [--no-warn] [-q]
//! ```
//!
//! Exit status: 0 when there is no error, 1 when a schema has errors, 2 for usage errors.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use bebopc::diag::{self, Color, Format};
use bebopc::{Compilation, Compiler};
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(name = "bebopc", version, about = "The Bebop schema compiler")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and validate schemas without generating anything.
    Check(CheckArgs),
}

/// Options shared by commands that read schemas.
#[derive(Args, Debug)]
struct InputArgs {
    /// Schema files to compile.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// Directory in which imports are searched (repeatable, searched in order).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    include: Vec<PathBuf>,
}

/// Options controlling how diagnostics are shown.
#[derive(Args, Debug)]
struct OutputArgs {
    /// Diagnostic format.
    #[arg(long, value_enum, default_value_t = FormatArg::Terminal)]
    format: FormatArg,
    /// When to use colours.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
    /// Do not show warnings.
    #[arg(long)]
    no_warn: bool,
    /// Print only errors (no warnings, no summary).
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Terminal,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check(&args),
    }
}

fn compile(input: &InputArgs) -> Compilation {
    let mut compiler = Compiler::new();
    for dir in &input.include {
        compiler = compiler.include_dir(dir);
    }
    compiler.compile(&input.files)
}

fn check(args: &CheckArgs) -> ExitCode {
    let result = compile(&args.input);
    report(&result, &args.output);
    if result.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints diagnostics (terminal format to stderr, JSON lines to stdout) and a summary.
fn report(result: &Compilation, out: &OutputArgs) {
    let shown: Vec<diag::Diagnostic> = result
        .diagnostics
        .iter()
        .filter(|d| d.is_error() || !(out.no_warn || out.quiet))
        .cloned()
        .collect();
    match out.format {
        FormatArg::Json => {
            let text = diag::render_all(&shown, &result.sources, Format::Json, false);
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
        }
        FormatArg::Terminal => {
            let color = match out.color {
                ColorArg::Auto => Color::Auto,
                ColorArg::Always => Color::Always,
                ColorArg::Never => Color::Never,
            }
            .resolve_for_stderr();
            let text = diag::render_all(&shown, &result.sources, Format::Terminal, color);
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(text.as_bytes());
            if !out.quiet {
                let errors = result.errors().count();
                let warnings = if out.no_warn {
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
                let _ = writeln!(stderr, "{summary}");
            }
        }
    }
}
