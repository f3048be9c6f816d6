//! The plugin protocol of `bebop/plugin.bop`: what the compiler sends a code generator and
//! what it answers.

use bebop::{Decode, Encode, Error, Reader, Sink, WireSize, field_size};

use crate::{DiagnosticSeverity, SchemaDescriptor, SourceCodeInfo, map_entries};

/// `bebop.CodeGeneratorRequest`: what the compiler writes to a plugin's stdin.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CodeGeneratorRequest {
    /// `files_to_generate(1)`: the files named on the command line.
    pub files_to_generate: Option<Vec<String>>,
    /// `parameter(2)`: the plugin parameter (the reference sends the output directory).
    pub parameter: Option<String>,
    /// `compiler_version(3)`.
    pub compiler_version: Option<Version>,
    /// `schemas(4)`: the files to generate and everything they import.
    pub schemas: Option<Vec<SchemaDescriptor>>,
    /// `host_options(5)`: `map[string, string]` of compiler options, in wire order.
    pub host_options: Option<Vec<(String, String)>>,
}

impl CodeGeneratorRequest {
    fn body_size(&self) -> usize {
        field_size(&self.files_to_generate)
            + field_size(&self.parameter)
            + field_size(&self.compiler_version)
            + field_size(&self.schemas)
            + self
                .host_options
                .as_ref()
                .map_or(0, |v| 1 + map_entries::encoded_size(v))
            + 1
    }
}

impl WireSize for CodeGeneratorRequest {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for CodeGeneratorRequest {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = CodeGeneratorRequest::default();
            loop {
                match r.read_tag()? {
                    1 => m.files_to_generate = Some(r.read()?),
                    2 => m.parameter = Some(r.read()?),
                    3 => m.compiler_version = Some(r.read()?),
                    4 => m.schemas = Some(r.read()?),
                    5 => m.host_options = Some(map_entries::decode(r)?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for CodeGeneratorRequest {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.files_to_generate {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.parameter {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.compiler_version {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.schemas {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.host_options {
                    s.write(&[5])?;
                    map_entries::encode(v, s)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.Diagnostic`: a message from a plugin to the user.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Diagnostic {
    /// `severity(1)`.
    pub severity: Option<DiagnosticSeverity>,
    /// `text(2)`.
    pub text: Option<String>,
    /// `hint(3)`: how to fix it.
    pub hint: Option<String>,
    /// `file(4)`: the source file it is about.
    pub file: Option<String>,
    /// `span(5)`: `[start_line, start_col, end_line, end_col]`, 1-based.
    pub span: Option<[i32; 4]>,
}

impl Diagnostic {
    fn body_size(&self) -> usize {
        field_size(&self.severity)
            + field_size(&self.text)
            + field_size(&self.hint)
            + field_size(&self.file)
            + field_size(&self.span)
            + 1
    }
}

impl WireSize for Diagnostic {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for Diagnostic {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = Diagnostic::default();
            loop {
                match r.read_tag()? {
                    1 => m.severity = Some(r.read()?),
                    2 => m.text = Some(r.read()?),
                    3 => m.hint = Some(r.read()?),
                    4 => m.file = Some(r.read()?),
                    5 => m.span = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for Diagnostic {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.severity {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.text {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.hint {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.file {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.span {
                    s.write_field(5, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.GeneratedFile`: a file a plugin produced, or a fragment to insert into one.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct GeneratedFile {
    /// `name(1)`: the path relative to the output directory, `/`-separated; absent to append to the previous file.
    pub name: Option<String>,
    /// `insertion_point(2)`: the insertion point in `name` to insert `content` at.
    pub insertion_point: Option<String>,
    /// `content(3)`: the file's contents or the fragment.
    pub content: Option<String>,
    /// `generated_code_info(4)`: source mapping for the generated code.
    pub generated_code_info: Option<SourceCodeInfo>,
}

impl GeneratedFile {
    fn body_size(&self) -> usize {
        field_size(&self.name)
            + field_size(&self.insertion_point)
            + field_size(&self.content)
            + field_size(&self.generated_code_info)
            + 1
    }
}

impl WireSize for GeneratedFile {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for GeneratedFile {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = GeneratedFile::default();
            loop {
                match r.read_tag()? {
                    1 => m.name = Some(r.read()?),
                    2 => m.insertion_point = Some(r.read()?),
                    3 => m.content = Some(r.read()?),
                    4 => m.generated_code_info = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for GeneratedFile {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.name {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.insertion_point {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.content {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.generated_code_info {
                    s.write_field(4, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.CodeGeneratorResponse`: what a plugin writes to its stdout.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CodeGeneratorResponse {
    /// `error(1)`: when non-empty, generation failed because of the schemas.
    pub error: Option<String>,
    /// `files(2)`: in the order to apply them.
    pub files: Option<Vec<GeneratedFile>>,
    /// `diagnostics(3)`.
    pub diagnostics: Option<Vec<Diagnostic>>,
}

impl CodeGeneratorResponse {
    fn body_size(&self) -> usize {
        field_size(&self.error) + field_size(&self.files) + field_size(&self.diagnostics) + 1
    }
}

impl WireSize for CodeGeneratorResponse {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for CodeGeneratorResponse {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = CodeGeneratorResponse::default();
            loop {
                match r.read_tag()? {
                    1 => m.error = Some(r.read()?),
                    2 => m.files = Some(r.read()?),
                    3 => m.diagnostics = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for CodeGeneratorResponse {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.error {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.files {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.diagnostics {
                    s.write_field(3, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.Version` (a struct): a compiler version, `major.minor.patch-suffix`.
///
/// ```
/// use bebop_descriptor::Version;
///
/// let v = Version { major: 2026, minor: 0, patch: 0, suffix: "alpha.3".into() };
/// assert_eq!(v.to_string(), "2026.0.0-alpha.3");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Version {
    /// `major`.
    pub major: i32,
    /// `minor`.
    pub minor: i32,
    /// `patch`.
    pub patch: i32,
    /// `suffix`: the pre-release suffix (`alpha.1`), empty for a release.
    pub suffix: String,
}

impl core::fmt::Display for Version {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.suffix.is_empty() {
            write!(f, "-{}", self.suffix)?;
        }
        Ok(())
    }
}

impl WireSize for Version {
    const MIN_SIZE: usize = 12 + <String as WireSize>::MIN_SIZE;
}

impl<'a> Decode<'a> for Version {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Version {
            major: r.read()?,
            minor: r.read()?,
            patch: r.read()?,
            suffix: r.read()?,
        })
    }
}

impl Encode for Version {
    fn encoded_size(&self) -> usize {
        12 + self.suffix.encoded_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.major.encode(s)?;
        self.minor.encode(s)?;
        self.patch.encode(s)?;
        self.suffix.encode(s)
    }
}
