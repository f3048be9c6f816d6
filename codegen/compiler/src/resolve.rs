//! Loading schemas and their imports, and finding what names refer to.
//!
//! # Imports
//!
//! `import "a/b.bop"` is looked up in each include directory (`-I`) in order, then among
//! the built-in standard schemas ([`crate::stdlib`]). It is never looked up relative to the
//! importing file. Absolute paths and `..` components are rejected. Files are loaded once
//! each (identified by their canonical path), breadth first, so import cycles are harmless.
//!
//! # Names
//!
//! A simple name used in a definition is looked up
//! 1. in the enclosing definitions, innermost first (their nested definitions);
//! 2. among the top-level definitions of the same file;
//! 3. among the top-level definitions of the files imported directly (more than one match
//!    is an ambiguity error).
//!
//! A qualified name `A.B.C` resolves its first part that way and then walks nested
//! definitions; if that fails it is taken as a fully qualified name (`package.Outer.Inner`)
//! among the definitions of the file and of the files it imports directly.
//!
//! # Visibility
//!
//! Top-level definitions are visible to importing files unless `local`. Nested definitions
//! are visible anywhere in their own file but to other files only when `export`ed.
//! Definitions nested in a union (inline branches included) are visible outside the union
//! only when `export`ed.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path as FsPath, PathBuf};

use crate::ast::{self, Item, ItemKind, Path};
use crate::diag::{Code, Diagnostic};
use crate::model::{DefKind, Visibility};
use crate::parser::{self, edit_distance};
use crate::source::{SourceId, SourceMap, Span};
use crate::stdlib;

/// Largest schema file accepted.
pub const MAX_FILE_SIZE: usize = 64 * 1024 * 1024;

/// Most files one compilation may load.
pub const MAX_FILES: usize = 10_000;

/// Where files come from.
#[derive(Clone, Debug)]
pub(crate) enum FileSystem {
    /// The real file system.
    Disk,
    /// In-memory files by (normalized) path.
    Memory(HashMap<String, Vec<u8>>),
}

/// One loaded and parsed file.
#[derive(Debug)]
pub(crate) struct LoadedFile {
    /// Path as given or as imported.
    pub path: String,
    pub source: SourceId,
    pub ast: ast::File,
    pub builtin: bool,
    pub root: bool,
    /// The file each import resolved to, parallel to `ast.imports`.
    pub imports: Vec<Option<usize>>,
}

/// The result of loading.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub files: Vec<LoadedFile>,
    /// Diagnostics of lexing and parsing, file by file.
    pub parse_diagnostics: Vec<Diagnostic>,
    /// Diagnostics about reading files and imports.
    pub import_diagnostics: Vec<Diagnostic>,
}

/// Normalizes an import path: rejects absolute paths and `..`, drops `.` and empty parts.
pub fn normalize_import(path: &str) -> Result<String, &'static str> {
    if path.is_empty() {
        return Err("the import path is empty");
    }
    let bytes = path.as_bytes();
    if path.starts_with('/')
        || path.starts_with('\\')
        || (bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic())
    {
        return Err("import paths must be relative to an include directory, not absolute");
    }
    let mut parts = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err("'..' is not allowed in import paths"),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err("the import path names no file");
    }
    Ok(parts.join("/"))
}

enum Found {
    /// `shown` is where the file opens from the working directory.
    File {
        key: String,
        bytes: Vec<u8>,
        shown: String,
    },
    Builtin {
        key: String,
        text: &'static str,
    },
}

struct LoaderState<'a> {
    fs: &'a FileSystem,
    include_dirs: &'a [PathBuf],
    sources: &'a mut SourceMap,
    loaded: Loaded,
    by_key: HashMap<String, usize>,
    queue: VecDeque<usize>,
    limit_reported: bool,
}

/// Loads the root files and everything they import.
pub(crate) fn load(
    roots: &[String],
    include_dirs: &[PathBuf],
    fs: &FileSystem,
    sources: &mut SourceMap,
) -> Loaded {
    let mut st = LoaderState {
        fs,
        include_dirs,
        sources,
        loaded: Loaded::default(),
        by_key: HashMap::new(),
        queue: VecDeque::new(),
        limit_reported: false,
    };
    for root in roots {
        st.load_root(root);
    }
    while let Some(index) = st.queue.pop_front() {
        st.resolve_imports(index);
    }
    st.loaded
}

impl LoaderState<'_> {
    fn load_root(&mut self, path: &str) {
        let key = match self.fs {
            FileSystem::Disk => std::fs::canonicalize(path)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| path.to_string()),
            FileSystem::Memory(_) => normalize_import(path).unwrap_or_else(|_| path.to_string()),
        };
        if let Some(&i) = self.by_key.get(&key) {
            if let Some(f) = self.loaded.files.get_mut(i) {
                f.root = true;
            }
            return;
        }
        let bytes = match self.fs {
            FileSystem::Disk => read_limited(FsPath::new(path)),
            FileSystem::Memory(map) => map
                .get(&key)
                .cloned()
                .ok_or_else(|| "no such file".to_string()),
        };
        match bytes {
            Ok(bytes) => {
                self.add_file(key, path.to_string(), FileText::Bytes(bytes), true, false);
            }
            Err(why) => {
                let id = self.sources.add(path, String::new());
                self.loaded.import_diagnostics.push(Diagnostic::error(
                    Code::E030,
                    Span::point(id, 0),
                    format!("cannot read '{path}': {why}"),
                ));
            }
        }
    }

    fn add_file(
        &mut self,
        key: String,
        path: String,
        text: FileText,
        root: bool,
        builtin: bool,
    ) -> Option<usize> {
        if self.loaded.files.len() >= MAX_FILES {
            if !self.limit_reported {
                self.limit_reported = true;
                let id = self.sources.add(path.clone(), String::new());
                self.loaded.import_diagnostics.push(Diagnostic::error(
                    Code::E033,
                    Span::point(id, 0),
                    format!("too many files (the limit is {MAX_FILES})"),
                ));
            }
            return None;
        }
        let (text, bad_utf8) = match text {
            FileText::Static(s) => (s.to_string(), None),
            FileText::Bytes(bytes) => match String::from_utf8(bytes) {
                Ok(s) => (s, None),
                Err(e) => {
                    let at = e.utf8_error().valid_up_to();
                    (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(at))
                }
            },
        };
        let source = self.sources.add(path.clone(), text);
        let ast = match bad_utf8 {
            Some(at) => {
                self.loaded.parse_diagnostics.push(
                    Diagnostic::error(
                        Code::E001,
                        Span::new(source, at as u32, at as u32 + 1),
                        "the file is not valid UTF-8",
                    )
                    .with_note("schema files must be UTF-8 encoded; the file was not parsed"),
                );
                ast::File {
                    source,
                    edition: None,
                    package: None,
                    imports: Vec::new(),
                    items: Vec::new(),
                }
            }
            None => {
                let parsed = parser::parse(source, self.sources.file(source).text());
                self.loaded.parse_diagnostics.extend(parsed.diagnostics);
                parsed.file
            }
        };
        let index = self.loaded.files.len();
        let import_count = ast.imports.len();
        self.loaded.files.push(LoadedFile {
            path,
            source,
            ast,
            builtin,
            root,
            imports: vec![None; import_count],
        });
        self.by_key.insert(key, index);
        self.queue.push_back(index);
        Some(index)
    }

    fn resolve_imports(&mut self, index: usize) {
        let Some(file) = self.loaded.files.get(index) else {
            return;
        };
        let imports: Vec<ast::ImportDecl> = file.ast.imports.clone();
        let mut seen: HashSet<usize> = HashSet::new();
        for (i, import) in imports.iter().enumerate() {
            let normalized = match normalize_import(&import.path) {
                Ok(p) => p,
                Err(why) => {
                    self.loaded.import_diagnostics.push(Diagnostic::error(
                        Code::E032,
                        import.span,
                        format!("invalid import path '{}': {why}", import.path),
                    ));
                    continue;
                }
            };
            let target = match self.find(&normalized) {
                Some(Found::File { key, bytes, shown }) => match self.by_key.get(&key) {
                    Some(&t) => Some(t),
                    None => {
                        let added = self.add_file(
                            key,
                            normalized.clone(),
                            FileText::Bytes(bytes),
                            false,
                            false,
                        );
                        if let Some(file) = added.and_then(|i| self.loaded.files.get(i)) {
                            self.sources.set_display_path(file.source, shown);
                        }
                        added
                    }
                },
                Some(Found::Builtin { key, text }) => match self.by_key.get(&key) {
                    Some(&t) => Some(t),
                    None => {
                        self.add_file(key, normalized.clone(), FileText::Static(text), false, true)
                    }
                },
                None => {
                    let mut d = Diagnostic::error(
                        Code::E031,
                        import.span,
                        format!("cannot find import '{}'", import.path),
                    );
                    d = d.with_note(self.searched_note());
                    self.loaded.import_diagnostics.push(d);
                    None
                }
            };
            if let Some(t) = target {
                if !seen.insert(t) {
                    self.loaded.import_diagnostics.push(Diagnostic::warning(
                        Code::W006,
                        import.span,
                        format!("'{}' is imported more than once", import.path),
                    ));
                }
                if let Some(f) = self.loaded.files.get_mut(index) {
                    if let Some(slot) = f.imports.get_mut(i) {
                        *slot = Some(t);
                    }
                }
            }
        }
    }

    fn searched_note(&self) -> String {
        if self.include_dirs.is_empty() {
            "no include directory was given (use -I DIR); only the standard schemas were searched"
                .to_string()
        } else {
            let dirs: Vec<String> = self
                .include_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            format!(
                "searched the include directories {} and the standard schemas",
                dirs.join(", ")
            )
        }
    }

    fn find(&self, normalized: &str) -> Option<Found> {
        match self.fs {
            FileSystem::Disk => {
                for dir in self.include_dirs {
                    let candidate = dir.join(normalized);
                    if candidate.is_file() {
                        let key = std::fs::canonicalize(&candidate)
                            .map(|p| p.to_string_lossy().into_owned())
                            .unwrap_or_else(|_| candidate.to_string_lossy().into_owned());
                        let shown = candidate.to_string_lossy();
                        let shown = shown.strip_prefix("./").unwrap_or(&shown).to_string();
                        if let Some(&_i) = self.by_key.get(&key) {
                            return Some(Found::File {
                                key,
                                bytes: Vec::new(),
                                shown,
                            });
                        }
                        match read_limited(&candidate) {
                            Ok(bytes) => return Some(Found::File { key, bytes, shown }),
                            Err(_) => continue,
                        }
                    }
                }
            }
            FileSystem::Memory(map) => {
                let mut candidates: Vec<String> = self
                    .include_dirs
                    .iter()
                    .filter_map(|d| {
                        let joined = format!("{}/{}", d.to_string_lossy(), normalized);
                        normalize_import(&joined).ok()
                    })
                    .collect();
                candidates.push(normalized.to_string());
                for key in candidates {
                    if let Some(bytes) = map.get(&key) {
                        let bytes = if self.by_key.contains_key(&key) {
                            Vec::new()
                        } else {
                            bytes.clone()
                        };
                        return Some(Found::File {
                            shown: key.clone(),
                            key,
                            bytes,
                        });
                    }
                }
            }
        }
        stdlib::lookup(normalized).map(|text| Found::Builtin {
            key: format!("<builtin>/{normalized}"),
            text,
        })
    }
}

enum FileText {
    Bytes(Vec<u8>),
    Static(&'static str),
}

/// Reads at most [`MAX_FILE_SIZE`] bytes of `path`. The size the file system reports is not
/// trusted (devices such as `/dev/zero`, FIFOs and `/proc` files report 0 or nothing): at most
/// the limit and one byte more are ever read.
fn read_limited(path: &FsPath) -> Result<Vec<u8>, String> {
    read_at_most(path, MAX_FILE_SIZE)
}

/// Reads `path` whole if it holds at most `limit` bytes; reads no more than `limit + 1`
/// bytes to find out.
pub fn read_at_most(path: &FsPath, limit: usize) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let too_large = || {
        if limit >= 1024 * 1024 {
            format!("the file is larger than {} MiB", limit / (1024 * 1024))
        } else {
            format!("the file is larger than {limit} bytes")
        }
    };
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.is_dir() {
        return Err("it is a directory".into());
    }
    if meta.is_file() && meta.len() > limit as u64 {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

// ---- symbols --------------------------------------------------------------------------

/// One definition in the symbol table. Its index is its [`crate::model::DefId`].
#[derive(Debug)]
pub(crate) struct Sym<'a> {
    pub file: usize,
    pub parent: Option<usize>,
    pub name: &'a str,
    pub fqn: String,
    pub kind: DefKind,
    pub visibility: Visibility,
    pub item: &'a Item,
    /// Nested definitions by name.
    pub children: HashMap<&'a str, usize>,
    /// Nested definitions in source order.
    pub nested: Vec<usize>,
}

/// Every definition of a compilation.
#[derive(Debug)]
pub(crate) struct Symbols<'a> {
    pub files: &'a [LoadedFile],
    pub syms: Vec<Sym<'a>>,
    /// Top-level definitions of each file by name.
    pub top: Vec<HashMap<&'a str, usize>>,
    /// Top-level definitions of each file in order.
    pub top_order: Vec<Vec<usize>>,
    /// Definitions by fully qualified name.
    pub by_fqn: HashMap<String, Vec<usize>>,
    /// Definitions by simple name (for hints).
    pub by_name: HashMap<&'a str, Vec<usize>>,
    /// How many spelling suggestions were computed (they are bounded).
    suggestions: std::cell::Cell<usize>,
}

/// Spelling suggestions are computed for this many unknown names per compilation.
const MAX_SUGGESTIONS: usize = 50;

pub(crate) fn kind_of(item: &Item) -> DefKind {
    match item.kind {
        ItemKind::Enum(_) => DefKind::Enum,
        ItemKind::Struct(_) => DefKind::Struct,
        ItemKind::Message(_) => DefKind::Message,
        ItemKind::Union(_) => DefKind::Union,
        ItemKind::Service(_) => DefKind::Service,
        ItemKind::Const(_) => DefKind::Const,
        ItemKind::Decorator(_) => DefKind::Decorator,
    }
}

/// Outcome of looking a name up.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    Found(usize),
    Ambiguous(Vec<usize>),
    NotFound,
}

impl<'a> Symbols<'a> {
    /// Builds the table, reporting duplicate definitions.
    pub fn build(files: &'a [LoadedFile], diags: &mut Vec<Diagnostic>) -> Symbols<'a> {
        let mut s = Symbols {
            files,
            syms: Vec::new(),
            top: vec![HashMap::new(); files.len()],
            top_order: vec![Vec::new(); files.len()],
            by_fqn: HashMap::new(),
            by_name: HashMap::new(),
            suggestions: std::cell::Cell::new(0),
        };
        for (fi, file) in files.iter().enumerate() {
            let package = file.ast.package.as_ref().map(|p| p.0.as_str());
            for item in &file.ast.items {
                let fqn = match package {
                    Some(p) => format!("{p}.{}", item.name.name),
                    None => item.name.name.clone(),
                };
                let id = s.add(fi, None, item, fqn, diags);
                if let Some(&first) = s.top[fi].get(item.name.name.as_str()) {
                    diags.push(duplicate(&s, id, first));
                } else {
                    s.top[fi].insert(&item.name.name, id);
                }
                s.top_order[fi].push(id);
            }
        }
        // Same fully qualified name in different files.
        let mut dups: Vec<(usize, usize)> = Vec::new();
        for ids in s.by_fqn.values() {
            if let Some(&first) = ids.first() {
                for &other in &ids[1..] {
                    if s.syms[other].file != s.syms[first].file {
                        dups.push((other, first));
                    }
                }
            }
        }
        dups.sort();
        for (other, first) in dups {
            let a = &s.syms[other];
            let b = &s.syms[first];
            diags.push(
                Diagnostic::error(
                    Code::E043,
                    a.item.name.span,
                    format!(
                        "'{}' is defined in both '{}' and '{}'",
                        a.fqn, files[a.file].path, files[b.file].path
                    ),
                )
                .with_label(b.item.name.span, "also defined here"),
            );
        }
        s
    }

    fn add(
        &mut self,
        file: usize,
        parent: Option<usize>,
        item: &'a Item,
        fqn: String,
        diags: &mut Vec<Diagnostic>,
    ) -> usize {
        let id = self.syms.len();
        self.syms.push(Sym {
            file,
            parent,
            name: &item.name.name,
            fqn: fqn.clone(),
            kind: kind_of(item),
            visibility: item.visibility,
            item,
            children: HashMap::new(),
            nested: Vec::new(),
        });
        self.by_fqn.entry(fqn.clone()).or_default().push(id);
        self.by_name.entry(&item.name.name).or_default().push(id);
        for nested in item.kind.nested() {
            let child_fqn = format!("{fqn}.{}", nested.name.name);
            let child = self.add(file, Some(id), nested, child_fqn, diags);
            if let Some(&first) = self.syms[id].children.get(nested.name.name.as_str()) {
                let d = duplicate(self, child, first);
                diags.push(d);
            } else {
                self.syms[id].children.insert(&nested.name.name, child);
            }
            self.syms[id].nested.push(child);
        }
        id
    }

    /// Files whose top-level definitions a file may name: itself and its direct imports.
    pub fn visible_files(&self, file: usize) -> Vec<usize> {
        let mut v = vec![file];
        if let Some(f) = self.files.get(file) {
            for t in f.imports.iter().flatten() {
                if !v.contains(t) {
                    v.push(*t);
                }
            }
        }
        v
    }

    /// Looks up a simple name from a definition (`scope`) in `file`.
    pub fn lookup_simple(&self, file: usize, scope: Option<usize>, name: &str) -> Lookup {
        let mut s = scope;
        while let Some(id) = s {
            if let Some(&c) = self.syms[id].children.get(name) {
                return Lookup::Found(c);
            }
            s = self.syms[id].parent;
        }
        if let Some(&id) = self.top[file].get(name) {
            return Lookup::Found(id);
        }
        let mut found: Vec<usize> = Vec::new();
        for f in self.visible_files(file).into_iter().skip(1) {
            if let Some(&id) = self.top[f].get(name) {
                if !found.contains(&id) {
                    found.push(id);
                }
            }
        }
        match found.len() {
            0 => Lookup::NotFound,
            1 => Lookup::Found(found[0]),
            _ => {
                // Prefer exported definitions when only one is.
                let exported: Vec<usize> = found
                    .iter()
                    .copied()
                    .filter(|&id| self.syms[id].visibility != Visibility::Local)
                    .collect();
                if exported.len() == 1 {
                    Lookup::Found(exported[0])
                } else {
                    Lookup::Ambiguous(found)
                }
            }
        }
    }

    /// Resolves a possibly qualified name from `scope` in `file`, checking visibility.
    pub fn resolve(
        &self,
        file: usize,
        scope: Option<usize>,
        path: &Path,
        what: &str,
    ) -> Result<usize, Diagnostic> {
        let Some(first) = path.parts.first() else {
            return Err(Diagnostic::error(Code::E040, path.span, "empty name"));
        };
        let joined = path.joined();
        match self.lookup_simple(file, scope, &first.name) {
            Lookup::Found(id) => {
                if let Some(target) = self.walk(id, &path.parts[1..]) {
                    self.check_access(file, scope, target, path.span)?;
                    return Ok(target);
                }
            }
            Lookup::Ambiguous(ids) if path.parts.len() == 1 => {
                let names: Vec<String> = ids
                    .iter()
                    .map(|&id| {
                        format!(
                            "'{}' (in '{}')",
                            self.syms[id].fqn, self.files[self.syms[id].file].path
                        )
                    })
                    .collect();
                let mut d = Diagnostic::error(
                    Code::E041,
                    path.span,
                    format!(
                        "{what} '{joined}' is ambiguous: it may be {}",
                        names.join(" or ")
                    ),
                );
                let quals: Vec<String> = ids
                    .iter()
                    .map(|&id| format!("'{}'", self.syms[id].fqn))
                    .collect();
                d = d.with_help(format!("write the full name: {}", quals.join(" or ")));
                for &id in &ids {
                    d = d.with_label(self.syms[id].item.name.span, "defined here");
                }
                return Err(d);
            }
            _ => {}
        }
        // A fully qualified name.
        if path.parts.len() > 1 {
            if let Some(ids) = self.by_fqn.get(&joined) {
                let visible = self.visible_files(file);
                let mut in_view = ids
                    .iter()
                    .copied()
                    .filter(|&id| visible.contains(&self.syms[id].file));
                if let Some(id) = in_view.next() {
                    self.check_access(file, scope, id, path.span)?;
                    return Ok(id);
                }
            }
        }
        Err(self.unknown(file, scope, path, what))
    }

    fn walk(&self, mut id: usize, rest: &[ast::Ident]) -> Option<usize> {
        for part in rest {
            id = *self.syms[id].children.get(part.name.as_str())?;
        }
        Some(id)
    }

    /// Whether `scope` is `ancestor` or nested in it.
    fn inside(&self, scope: Option<usize>, ancestor: usize) -> bool {
        let mut s = scope;
        while let Some(id) = s {
            if id == ancestor {
                return true;
            }
            s = self.syms[id].parent;
        }
        false
    }

    /// Checks that `target` may be named from `scope` in `file`.
    pub fn check_access(
        &self,
        file: usize,
        scope: Option<usize>,
        target: usize,
        at: Span,
    ) -> Result<(), Diagnostic> {
        let mut d = Some(target);
        while let Some(id) = d {
            let sym = &self.syms[id];
            let same_file = sym.file == file;
            match sym.parent {
                None => {
                    if !same_file && sym.visibility == Visibility::Local {
                        return Err(Diagnostic::error(
                            Code::E042,
                            at,
                            format!(
                                "'{}' is local to '{}' and cannot be used from other files",
                                sym.fqn, self.files[sym.file].path
                            ),
                        )
                        .with_label(sym.item.name.span, "declared local here"));
                    }
                }
                Some(parent) => {
                    if !same_file && sym.visibility != Visibility::Export {
                        return Err(Diagnostic::error(
                            Code::E042,
                            at,
                            format!(
                                "'{}' is not exported and cannot be used from other files",
                                sym.fqn
                            ),
                        )
                        .with_label(sym.item.name.span, "declared here")
                        .with_help("mark the nested definition `export`"));
                    }
                    if same_file
                        && self.syms[parent].kind == DefKind::Union
                        && sym.visibility != Visibility::Export
                        && !self.inside(scope, parent)
                    {
                        return Err(Diagnostic::error(
                            Code::E042,
                            at,
                            format!(
                                "'{}' belongs to union '{}' and cannot be used outside it",
                                sym.fqn, self.syms[parent].name
                            ),
                        )
                        .with_label(sym.item.name.span, "declared here")
                        .with_help("mark the branch or definition `export` to use it elsewhere"));
                    }
                }
            }
            d = sym.parent;
        }
        Ok(())
    }

    fn unknown(&self, file: usize, scope: Option<usize>, path: &Path, what: &str) -> Diagnostic {
        let joined = path.joined();
        let mut d = Diagnostic::error(Code::E040, path.span, format!("unknown {what} '{joined}'"));
        let last = path.parts.last().map(|p| p.name.as_str()).unwrap_or("");
        if what == "type" && joined == "date" {
            return d.with_help("'date' was removed; use 'timestamp' (or 'duration')");
        }
        // Defined in a file that is not imported here?
        let visible = self.visible_files(file);
        let mut candidates: Vec<usize> = self.by_fqn.get(&joined).cloned().unwrap_or_default();
        if path.parts.len() == 1 {
            if let Some(ids) = self.by_name.get(last) {
                candidates.extend(
                    ids.iter()
                        .copied()
                        .filter(|&i| self.syms[i].parent.is_none()),
                );
            }
        }
        if let Some(&id) = candidates
            .iter()
            .find(|&&i| !visible.contains(&self.syms[i].file))
        {
            let f = &self.files[self.syms[id].file];
            return d.with_help(format!(
                "'{}' is defined in '{}'; add `import \"{}\"`",
                self.syms[id].fqn, f.path, f.path
            ));
        }
        // A nested definition with that name in view?
        if path.parts.len() == 1 {
            let nested = self.by_name.get(last).and_then(|ids| {
                ids.iter().copied().find(|&i| {
                    self.syms[i].parent.is_some() && visible.contains(&self.syms[i].file)
                })
            });
            if let Some(id) = nested {
                let sym = &self.syms[id];
                let pkg = self.files[sym.file]
                    .ast
                    .package
                    .as_ref()
                    .map(|p| p.0.len() + 1)
                    .unwrap_or(0);
                let relative = sym.fqn.get(pkg..).unwrap_or(&sym.fqn);
                d = d.with_help(format!(
                    "'{}' is nested; refer to it as '{relative}'{}",
                    last,
                    if self.check_access(file, scope, id, path.span).is_err() {
                        " (it is not visible from here unless exported)"
                    } else {
                        ""
                    }
                ));
                return d;
            }
        }
        // A close spelling? (bounded: at most MAX_SUGGESTIONS per compilation)
        let budget = self.suggestions.get();
        if what == "type" && path.parts.len() == 1 && budget < MAX_SUGGESTIONS {
            self.suggestions.set(budget + 1);
            let mut candidates: Vec<String> = crate::model::ScalarType::ALL
                .iter()
                .map(|t| t.name().to_string())
                .collect();
            for &f in &visible {
                candidates.extend(self.top[f].keys().map(|k| k.to_string()));
            }
            if let Some(best) = candidates
                .iter()
                .filter(|c| edit_distance(last, c) <= 2 && c.as_str() != last)
                .min_by_key(|c| edit_distance(last, c))
            {
                d = d.with_help(format!("did you mean '{best}'?"));
            }
        }
        d
    }
}

fn duplicate(s: &Symbols<'_>, again: usize, first: usize) -> Diagnostic {
    let a = &s.syms[again];
    let b = &s.syms[first];
    Diagnostic::error(
        Code::E043,
        a.item.name.span,
        format!("a definition named '{}' already exists here", a.name),
    )
    .with_label(b.item.name.span, "first defined here")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_paths() {
        assert_eq!(normalize_import("a/b.bop"), Ok("a/b.bop".to_string()));
        assert_eq!(normalize_import("./a//./b.bop"), Ok("a/b.bop".to_string()));
        assert!(normalize_import("../a.bop").is_err());
        assert!(normalize_import("a/../b.bop").is_err());
        assert!(normalize_import("a\\..\\b.bop").is_err());
        assert!(normalize_import("/etc/passwd").is_err());
        assert!(normalize_import("C:\\x.bop").is_err());
        assert!(normalize_import("").is_err());
        assert!(normalize_import("./").is_err());
    }
}
