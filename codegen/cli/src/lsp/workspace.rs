//! The files the server knows: the workspace's schemas as read from disk, the open
//! documents (whose text overrides the disk's), the import directories of `bebop.yml`, and
//! the compilations made from them.
//!
//! Files are named by a key: the path relative to the base directory (the directory of
//! `bebop.yml`, else the workspace root) with `/` separators, or the absolute path for a file
//! outside it. The compiler gets them as in-memory files under those keys, so an import
//! `"a/b.bop"` finds the key `a/b.bop` (or `DIR/a/b.bop` for an include directory `DIR`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use bebopc::format::FormatOptions;
use bebopc::source::SourceId;
use bebopc::{Analysis, Compiler};
use lsp_types::Uri;

use crate::config;
use crate::lsp::text;

/// Most schema files read from the workspace at start.
const MAX_WORKSPACE_FILES: usize = 20_000;

/// Directories never scanned for schemas.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", ".git"];

/// One open document.
#[derive(Debug, Clone)]
pub struct Document {
    /// Its text, as last sent by the editor.
    pub text: String,
    /// The version the editor gave it.
    pub version: i32,
}

/// A compilation and where its files are.
pub struct Compiled {
    /// The compilation, its partial model and its index.
    pub analysis: Analysis,
    /// The key of each index file (`None` for the built-in schemas).
    pub keys: Vec<Option<String>>,
    /// Index file by key.
    pub by_key: HashMap<String, usize>,
    /// The base of the keys.
    pub base: PathBuf,
}

impl Compiled {
    /// The URI of a key.
    pub fn uri_of_key(&self, key: &str) -> Option<Uri> {
        uri_of(&self.base, key)
    }

    /// The key of a source of the compilation.
    pub fn key_of_source(&self, source: SourceId) -> Option<&str> {
        let file = self.analysis.index.file_of_source(source)?;
        self.keys.get(file)?.as_deref()
    }

    /// The text of a source of the compilation.
    pub fn text_of_source(&self, source: SourceId) -> &str {
        self.analysis
            .compilation
            .sources
            .get(source)
            .map(|f| f.text())
            .unwrap_or("")
    }

    /// The keys of every file that `key` loads (itself included), through its imports.
    pub fn closure(&self, key: &str) -> HashSet<String> {
        let mut out = HashSet::new();
        let Some(&start) = self.by_key.get(key) else {
            return out;
        };
        let mut stack = vec![start];
        let mut seen = HashSet::new();
        while let Some(f) = stack.pop() {
            if !seen.insert(f) {
                continue;
            }
            if let Some(Some(k)) = self.keys.get(f) {
                out.insert(k.clone());
            }
            if let Some(file) = self.analysis.index.files.get(f) {
                stack.extend(file.imports.iter().copied());
            }
        }
        out
    }
}

/// Everything the server knows about the files.
pub struct Workspace {
    /// The base of keys (absolute).
    pub base: PathBuf,
    /// Import directories as keys relative to `base` (`.` for `base` itself).
    pub include: Vec<String>,
    /// The layout of formatting.
    pub format: FormatOptions,
    /// Schemas on disk by key.
    pub disk: BTreeMap<String, String>,
    /// Open documents by key.
    pub open: HashMap<String, Document>,
    /// For each open document, the keys of the files its last compilation loaded.
    pub deps: HashMap<String, HashSet<String>>,
    /// The whole workspace compiled, until something changes.
    pub cached: Option<Compiled>,
    /// One document compiled with what it imports, until something changes.
    pub local: Option<(String, Compiled)>,
    /// A problem with the configuration, to tell the user once.
    pub config_problem: Option<String>,
    /// The workspace root given by the editor.
    pub root: Option<PathBuf>,
}

impl Workspace {
    /// A workspace rooted at `root` (or nowhere: then only open documents are known).
    pub fn new(root: Option<PathBuf>) -> Workspace {
        let root = root.map(|r| std::fs::canonicalize(&r).unwrap_or(r));
        let mut ws = Workspace {
            base: root.clone().unwrap_or_else(|| PathBuf::from("/")),
            include: Vec::new(),
            format: FormatOptions::default(),
            disk: BTreeMap::new(),
            open: HashMap::new(),
            deps: HashMap::new(),
            cached: None,
            local: None,
            config_problem: None,
            root: root.clone(),
        };
        let Some(root) = root else {
            return ws;
        };
        if let Some(path) = config::discover(&root) {
            match config::load(&path) {
                Ok(c) => {
                    let base = std::fs::canonicalize(&c.root).unwrap_or(c.root.clone());
                    ws.base = base;
                    for dir in &c.include {
                        let dir = if dir.is_absolute() {
                            dir.clone()
                        } else {
                            c.root.join(dir)
                        };
                        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
                        ws.include.push(ws.key_of_path(&dir));
                    }
                    if let Some(indent) = c.format.indent {
                        ws.format.indent = indent;
                    }
                    if let Some(width) = c.format.line_width {
                        ws.format.line_width = width;
                    }
                }
                Err(e) => ws.config_problem = Some(e.to_string()),
            }
        }
        ws.scan();
        ws
    }

    /// Reads every `.bop` file under the base directory.
    fn scan(&mut self) {
        let walker = walkdir::WalkDir::new(&self.base)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| {
                let name = e.file_name().to_string_lossy();
                e.depth() == 0
                    || !(e.file_type().is_dir()
                        && (name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_ref())))
            });
        for entry in walker.flatten() {
            if self.disk.len() >= MAX_WORKSPACE_FILES {
                break;
            }
            let path = entry.path();
            if !entry.file_type().is_file() || path.extension().is_none_or(|e| e != "bop") {
                continue;
            }
            if let Some(text) = read(path) {
                let key = self.key_of_path(path);
                self.disk.insert(key, text);
            }
        }
    }

    /// The key of an absolute path.
    pub fn key_of_path(&self, path: &Path) -> String {
        match path.strip_prefix(&self.base) {
            Ok(rel) => {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if parts.is_empty() {
                    ".".to_string()
                } else {
                    parts.join("/")
                }
            }
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    /// The key of a URI (`None` for a URI that is not a file).
    pub fn key_of_uri(&self, uri: &Uri) -> Option<String> {
        let path = text::uri_to_path(uri)?;
        // The file may not exist yet (an unsaved new file): canonicalize its directory.
        let path = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                .map(|d| d.join(name))
                .unwrap_or(path.clone()),
            _ => path,
        };
        Some(self.key_of_path(&path))
    }

    /// The URI of a key.
    pub fn uri_of_key(&self, key: &str) -> Option<Uri> {
        uri_of(&self.base, key)
    }

    /// The current text of a file: the open document's, else the disk's.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.open
            .get(key)
            .map(|d| d.text.as_str())
            .or_else(|| self.disk.get(key).map(String::as_str))
    }

    /// Sets a document's text (opened or changed).
    pub fn set_open(&mut self, key: String, text: String, version: i32) {
        self.open.insert(key, Document { text, version });
        self.invalidate();
    }

    /// Closes a document: the disk's text counts again.
    pub fn close(&mut self, key: &str) {
        self.open.remove(key);
        self.deps.remove(key);
        self.refresh(key);
    }

    /// Reads a file from disk again (it changed, appeared or went away outside the editor).
    pub fn refresh(&mut self, key: &str) {
        let path = if Path::new(key).is_absolute() {
            PathBuf::from(key)
        } else {
            self.base.join(key)
        };
        match read(&path) {
            Some(text) => {
                self.disk.insert(key.to_string(), text);
            }
            None => {
                self.disk.remove(key);
            }
        }
        self.invalidate();
    }

    /// Forgets the compilations kept for requests.
    pub fn invalidate(&mut self) {
        self.cached = None;
        self.local = None;
    }

    /// Records the saved text of a document as the disk's.
    pub fn saved(&mut self, key: &str) {
        if let Some(doc) = self.open.get(key) {
            self.disk.insert(key.to_string(), doc.text.clone());
        }
    }

    /// The open documents affected by a change of `key`: itself when open, and those whose
    /// last compilation loaded it.
    pub fn affected(&self, key: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .open
            .keys()
            .filter(|k| k.as_str() == key || self.deps.get(*k).is_some_and(|d| d.contains(key)))
            .cloned()
            .collect();
        out.sort();
        out
    }

    fn compiler(&self) -> Compiler {
        let mut compiler = Compiler::new();
        #[cfg(feature = "lua")]
        {
            compiler = compiler.decorator_runtime(bebop_lua::LuaRuntime::new());
        }
        for dir in &self.include {
            compiler = compiler.include_dir(dir);
        }
        compiler
    }

    /// Compiles `roots` (keys) with every known file available to imports.
    pub fn compile(&self, roots: &[String]) -> Compiled {
        let mut files: Vec<(&str, &[u8])> = Vec::with_capacity(self.disk.len() + self.open.len());
        for (k, doc) in &self.open {
            files.push((k.as_str(), doc.text.as_bytes()));
        }
        for (k, text) in &self.disk {
            if !self.open.contains_key(k) {
                files.push((k.as_str(), text.as_bytes()));
            }
        }
        let roots: Vec<&str> = roots.iter().map(String::as_str).collect();
        let analysis = self.compiler().analyze_in_memory(&files, &roots);
        let keys: Vec<Option<String>> = analysis
            .index
            .files
            .iter()
            .map(|f| {
                (!f.builtin).then(|| {
                    analysis
                        .compilation
                        .sources
                        .display_path(f.source)
                        .to_string()
                })
            })
            .collect();
        let by_key = keys
            .iter()
            .enumerate()
            .filter_map(|(i, k)| k.clone().map(|k| (k, i)))
            .collect();
        Compiled {
            analysis,
            keys,
            by_key,
            base: self.base.clone(),
        }
    }

    /// A compilation that has `key` and what it imports: the whole workspace's when it is at
    /// hand, else `key` compiled on its own (kept until the next change).
    pub fn around(&mut self, key: &str) -> &Compiled {
        if self
            .cached
            .as_ref()
            .is_some_and(|c| c.by_key.contains_key(key))
        {
            return self.whole();
        }
        let local = match self.local.take() {
            Some((k, c)) if k == key => (k, c),
            _ => (key.to_string(), self.compile(&[key.to_string()])),
        };
        &self.local.insert(local).1
    }

    /// The whole workspace (every schema and open document) compiled, cached until the next
    /// change.
    pub fn whole(&mut self) -> &Compiled {
        let compiled = match self.cached.take() {
            Some(c) => c,
            None => {
                let mut roots: Vec<String> = self.disk.keys().cloned().collect();
                for k in self.open.keys() {
                    if !self.disk.contains_key(k) {
                        roots.push(k.clone());
                    }
                }
                roots.sort();
                self.compile(&roots)
            }
        };
        self.cached.insert(compiled)
    }
}

fn uri_of(base: &Path, key: &str) -> Option<Uri> {
    let path = Path::new(key);
    if path.is_absolute() {
        text::path_to_uri(path)
    } else {
        text::path_to_uri(&base.join(key))
    }
}

/// A schema file's text, when it can be read and is UTF-8 (at most the compiler's size
/// limit).
fn read(path: &Path) -> Option<String> {
    let bytes = bebopc::resolve::read_at_most(path, bebopc::resolve::MAX_FILE_SIZE).ok()?;
    String::from_utf8(bytes).ok()
}
