//! `bebopc lsp`, run as a child process and spoken to over stdio by a small LSP client
//! (Content-Length framing, JSON-RPC ids): a whole conversation (diagnostics at the right
//! UTF-16 ranges and cleared after the fix, hover, definition across an import, references,
//! completion, document symbols, formatting, rename, shutdown and exit with status 0);
//! broken and half-typed documents never crash it; and the time of a didChange ->
//! diagnostics round on a 2,000-definition workspace (printed, not asserted). Every wait is
//! bounded; the child is killed when the test ends, however it ends.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Project;
use serde_json::{Value, json};

/// The longest any one step may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// A running `bebopc lsp`; killed on drop.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    /// Notifications received while waiting for something else.
    notifications: Vec<Value>,
    stderr: Arc<Mutex<String>>,
    next_id: i64,
    root: String,
}

fn uri(p: &Project, rel: &str) -> String {
    let path = std::fs::canonicalize(p.path()).unwrap().join(rel);
    let mut s = String::from("file://");
    for &b in path.to_str().unwrap().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

impl Client {
    fn start(p: &Project) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bebopc"))
            .arg("lsp")
            .current_dir(p.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bebopc lsp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        length = v.parse::<usize>().ok();
                    }
                }
                let Some(n) = length else { return };
                let mut body = vec![0; n];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let Ok(v) = serde_json::from_slice::<Value>(&body) else {
                    return;
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        let mut c = Client {
            child,
            stdin,
            messages: rx,
            notifications: Vec::new(),
            stderr,
            next_id: 1,
            root: uri(p, ""),
        };
        let root = c.root.trim_end_matches('/').to_string();
        let init = c.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root,
                "capabilities": {},
                "workspaceFolders": [{ "uri": root, "name": "test" }],
            }),
        );
        assert_eq!(
            init["result"]["capabilities"]["positionEncoding"], "utf-16",
            "{init}"
        );
        c.notify("initialized", json!({}));
        c
    }

    fn send(&mut self, v: &Value) {
        let body = serde_json::to_vec(v).unwrap();
        let stdin = self.stdin.as_mut().expect("stdin open");
        write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdin.write_all(&body).unwrap();
        stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and waits for its response (the whole message).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.wait(&format!("the response to {method}"), |m| {
            (m.get("id") == Some(&json!(id)) && m.get("method").is_none()).then(|| m.clone())
        })
    }

    /// Waits for a message that `pick` accepts; other notifications are kept.
    fn wait<T>(&mut self, what: &str, mut pick: impl FnMut(&Value) -> Option<T>) -> T {
        if let Some(i) = self.notifications.iter().position(|m| pick(m).is_some()) {
            let m = self.notifications.remove(i);
            return pick(&m).unwrap();
        }
        let start = Instant::now();
        loop {
            let left = TIMEOUT.saturating_sub(start.elapsed());
            match self.messages.recv_timeout(left) {
                Ok(m) => {
                    if let Some(v) = pick(&m) {
                        return v;
                    }
                    if m.get("id").is_none() {
                        self.notifications.push(m);
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "timed out waiting for {what}\n--- stderr\n{}",
                    self.stderr.lock().unwrap()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "bebopc lsp closed its output while waiting for {what}\n--- stderr\n{}",
                    self.stderr.lock().unwrap()
                ),
            }
        }
    }

    /// Waits for the next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let uri = uri.to_string();
        self.wait(&format!("diagnostics for {uri}"), |m| {
            (m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri.as_str())
                .then(|| {
                    m["params"]["diagnostics"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
        })
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "bebop", "version": 1, "text": text } }),
        );
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            method,
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
        )
    }

    /// `shutdown`, `exit`, and the exit status.
    fn shutdown(mut self) -> std::process::ExitStatus {
        let r = self.request("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        self.stdin = None;
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < TIMEOUT, "bebopc lsp did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const SHAPES: &str = "import \"bebop/decorators.bop\"

/// A point on the plane.
struct Point {
    x: float32;
    y: float32;
}

/// Draws things.
service Canvas {
    /// Draws one point.
    draw(Point): Point;
}
";

const SCENE: &str = "import \"shapes.bop\"

message Scene {
    origin(1): Point;
    name(2): string;
}
";

fn labels(completion: &Value) -> Vec<String> {
    let items = completion["result"]
        .as_array()
        .or_else(|| completion["result"]["items"].as_array())
        .cloned()
        .unwrap_or_default();
    items
        .iter()
        .map(|i| i["label"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_whole_conversation() {
    let p = Project::new();
    p.write("shapes.bop", SHAPES).write("scene.bop", SCENE);
    let shapes = uri(&p, "shapes.bop");
    let scene = uri(&p, "scene.bop");
    let mut c = Client::start(&p);

    c.open(&shapes, SHAPES);
    c.open(&scene, SCENE);
    assert_eq!(c.diagnostics(&shapes), Vec::<Value>::new());
    assert_eq!(c.diagnostics(&scene), Vec::<Value>::new());

    // An error after a non-ASCII comment: the range is in UTF-16 code units (the emoji is
    // two of them; counted in characters the column would be one less).
    let broken = SCENE.replace("    origin(1): Point;", "    /*😀*/ origin(1): Pointt;");
    c.change(&scene, 2, &broken);
    let d = c.diagnostics(&scene);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "E040");
    assert_eq!(d[0]["severity"], 1);
    assert!(
        d[0]["message"].as_str().unwrap().contains("Pointt"),
        "{d:?}"
    );
    assert_eq!(
        d[0]["range"],
        json!({ "start": { "line": 3, "character": 22 }, "end": { "line": 3, "character": 28 } })
    );
    c.change(&scene, 3, SCENE);
    assert_eq!(c.diagnostics(&scene), Vec::<Value>::new());

    // A change to the imported file republishes the importer's diagnostics too.
    let renamed = SHAPES.replace("struct Point", "struct Spot");
    c.change(&shapes, 2, &renamed);
    let d = c.diagnostics(&scene);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "E040");
    // The service uses Point too: errors in shapes.bop itself.
    let own = c.diagnostics(&shapes);
    assert!(!own.is_empty());
    c.change(&shapes, 3, SHAPES);
    assert_eq!(c.diagnostics(&scene), Vec::<Value>::new());
    assert_eq!(c.diagnostics(&shapes), Vec::<Value>::new());

    // Hover on a type reference: kind, name, doc, wire size.
    let h = c.at("textDocument/hover", &scene, 3, 17);
    let text = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(text.contains("struct Point"), "{h}");
    assert!(text.contains("A point on the plane."), "{h}");
    assert!(text.contains("fixed size: 8 bytes"), "{h}");
    // Hover on a method: its id, request and response.
    let h = c.at("textDocument/hover", &shapes, 11, 6);
    let text = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(text.contains("method id `0x"), "{h}");
    assert!(text.contains("request: `Point`"), "{h}");
    assert!(text.contains("Draws one point."), "{h}");
    // Hover on a field: its type and index.
    let h = c.at("textDocument/hover", &scene, 4, 5);
    let text = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(text.contains("Scene.name: string"), "{h}");
    assert!(text.contains("index 2"), "{h}");

    // Definition across the import.
    let def = c.at("textDocument/definition", &scene, 3, 17);
    assert_eq!(def["result"]["uri"], shapes.as_str(), "{def}");
    assert_eq!(
        def["result"]["range"],
        json!({ "start": { "line": 3, "character": 7 }, "end": { "line": 3, "character": 12 } })
    );

    // Definition on an import's path: the imported file.
    let def = c.at("textDocument/definition", &scene, 0, 10);
    assert_eq!(def["result"]["uri"], shapes.as_str(), "{def}");

    // Semantic tokens: (line, column, length, type, modifiers), decoded.
    let t = c.request(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": { "uri": shapes } }),
    );
    let data: Vec<u64> = t["result"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(data.len() % 5, 0);
    let (mut line, mut col) = (0, 0);
    let mut tokens = Vec::new();
    for t in data.chunks(5) {
        if t[0] > 0 {
            col = 0;
        }
        line += t[0];
        col += t[1];
        tokens.push((line, col, t[2], t[3], t[4]));
    }
    for want in [
        (0, 0, 6, 0, 0),   // import: keyword
        (0, 7, 22, 13, 0), // the path: string
        (2, 0, 25, 14, 2), // doc comment: comment, documentation
        (3, 7, 5, 2, 1),   // Point: struct, declaration
        (4, 4, 1, 8, 1),   // x: property, declaration
        (4, 7, 7, 1, 4),   // float32: type, default library
        (11, 9, 5, 2, 0),  // Point (a use): struct
    ] {
        assert!(tokens.contains(&want), "{want:?} in {tokens:?}");
    }

    // References: the definition, the two uses in the service and the one in scene.bop.
    let refs = c.request(
        "textDocument/references",
        json!({ "textDocument": { "uri": shapes }, "position": { "line": 3, "character": 9 },
                "context": { "includeDeclaration": true } }),
    );
    let refs = refs["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(refs.len(), 4, "{refs:?}");
    assert_eq!(
        refs.iter().filter(|r| r["uri"] == scene.as_str()).count(),
        1
    );

    // Completion after `@`: the standard decorators with their parameters.
    let with_at = SHAPES.replace("struct Point {", "@\nstruct Point {");
    c.change(&shapes, 4, &with_at);
    let comp = c.at("textDocument/completion", &shapes, 3, 1);
    let names = labels(&comp);
    for want in ["deprecated", "flags", "forward_compatible"] {
        assert!(names.contains(&want.to_string()), "{names:?}");
    }
    let deprecated = comp["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "deprecated")
        .unwrap()
        .clone();
    assert!(
        deprecated["detail"]
            .as_str()
            .unwrap()
            .contains("reason: string?"),
        "{deprecated}"
    );
    // Inside the parentheses: the parameter names.
    let with_call = SHAPES.replace("struct Point {", "@deprecated(\nstruct Point {");
    let with_call = with_call.replace("@deprecated(\n", "@deprecated(r\n");
    c.change(&shapes, 5, &with_call);
    let names = labels(&c.at("textDocument/completion", &shapes, 3, 13));
    assert_eq!(names, vec!["reason".to_string()]);
    c.change(&shapes, 6, SHAPES);

    // Completion in a field type position: types in scope, scalars, keywords.
    let typing = SCENE.replace("    name(2): string;", "    name(2): Po");
    c.change(&scene, 4, &typing);
    let names = labels(&c.at("textDocument/completion", &scene, 4, 15));
    for want in ["Point", "Scene", "int32", "string", "map"] {
        assert!(names.contains(&want.to_string()), "{want} in {names:?}");
    }
    assert!(!names.contains(&"deprecated".to_string()), "{names:?}");
    c.change(&scene, 5, SCENE);

    // Document symbols, nested.
    let syms = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": shapes } }),
    );
    let syms = syms["result"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = syms.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Point", "Canvas"]);
    let children: Vec<&str> = syms[0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(children, ["x", "y"]);
    assert_eq!(syms[1]["children"][0]["name"], "draw");
    assert_eq!(syms[1]["children"][0]["kind"], 6); // Method

    // Formatting: the whole document.
    let messy = uri(&p, "messy.bop");
    c.open(&messy, "struct  A{x:int32;}");
    let f = c.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": messy }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    let edits = f["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(edits.len(), 1, "{f}");
    assert_eq!(edits[0]["newText"], "struct A {\n    x: int32;\n}\n");
    assert_eq!(
        edits[0]["range"],
        json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 19 } })
    );

    // Rename from a use in another file: the definition and every use.
    let r = c.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": scene }, "position": { "line": 3, "character": 17 },
                "newName": "Vec2" }),
    );
    let changes = r["result"]["changes"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert_eq!(changes.len(), 2, "{r}");
    assert_eq!(changes[&shapes].as_array().unwrap().len(), 3, "{r}");
    assert_eq!(changes[&scene].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(
        changes[&scene][0]["range"],
        json!({ "start": { "line": 3, "character": 15 }, "end": { "line": 3, "character": 20 } })
    );
    // A built-in type cannot be renamed, nor a name be made a keyword.
    let r = c.at("textDocument/rename", &scene, 4, 15);
    let r2 = c.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": scene }, "position": { "line": 4, "character": 15 },
                "newName": "Text" }),
    );
    assert!(r.get("error").is_some(), "{r}");
    assert!(
        r2["error"]["message"]
            .as_str()
            .unwrap()
            .contains("built-in"),
        "{r2}"
    );
    let r3 = c.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": scene }, "position": { "line": 3, "character": 18 },
                "newName": "struct" }),
    );
    assert!(r3.get("error").is_some(), "{r3}");

    // Closing clears the document's diagnostics.
    c.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": messy } }),
    );
    assert_eq!(c.diagnostics(&messy), Vec::<Value>::new());

    // An unknown request is an error, not the end.
    let r = c.request("bebop/unknown", json!({}));
    assert_eq!(r["error"]["code"], -32601);

    let status = c.shutdown();
    assert_eq!(status.code(), Some(0));
}

/// A tiny deterministic generator (xorshift), for edits.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const RICH: &str = "edition = \"2026\"
package demo.shop
import \"bebop/decorators.bop\"

@flags
/// Things.
enum Perm : byte { NONE = 0; READ = 1; WRITE = 2; ALL = READ | WRITE; }

struct Money { units: int64; nanos: int32; }

message Item {
    name(1): string;
    price(2): Money;
    @deprecated(\"use tags\")
    tag(3): string;
    tags(4): map[string, Perm[]];
}

union Event {
    Added(1): { item: Item; };
    Removed(2): message { id(1): uuid; };
}

const string GREETING = \"héllo 😀\";

service Shop {
    get(Item): Item;
    watch(Item): stream Event;
}
";

#[test]
fn broken_documents_never_crash_the_server() {
    let p = Project::new();
    let doc = uri(&p, "rich.bop");
    let mut c = Client::start(&p);
    c.open(&doc, RICH);
    assert_eq!(c.diagnostics(&doc), Vec::<Value>::new());
    let check = |c: &mut Client, text: &str, version: i64, rng: &mut Rng| {
        c.change(&doc, version, text);
        let lines = text.lines().count().max(1) as u32;
        for method in [
            "textDocument/hover",
            "textDocument/completion",
            "textDocument/definition",
            "textDocument/references",
        ] {
            let line = rng.below(lines as usize + 1) as u32;
            let ch = rng.below(40) as u32;
            let r = if method == "textDocument/references" {
                c.request(
                    method,
                    json!({ "textDocument": { "uri": doc }, "position": { "line": line, "character": ch },
                            "context": { "includeDeclaration": true } }),
                )
            } else {
                c.at(method, &doc, line, ch)
            };
            assert!(r.get("error").is_none(), "{method} on {text:?}: {r}");
        }
        for method in ["textDocument/documentSymbol", "textDocument/formatting"] {
            let r = c.request(
                method,
                json!({ "textDocument": { "uri": doc }, "options": { "tabSize": 4, "insertSpaces": true } }),
            );
            assert!(r.get("error").is_none(), "{method} on {text:?}: {r}");
        }
        let r = c.request(
            "textDocument/rename",
            json!({ "textDocument": { "uri": doc }, "position": { "line": rng.below(30), "character": rng.below(30) },
                    "newName": "Renamed" }),
        );
        // Refusing is fine; an internal error is not.
        assert_ne!(r["error"]["code"], -32603, "rename on {text:?}: {r}");
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut version = 2;
    // Every truncation (at character boundaries, in steps), as while typing the file.
    let cuts: Vec<usize> = RICH.char_indices().map(|(i, _)| i).step_by(3).collect();
    for &cut in &cuts {
        check(&mut c, &RICH[..cut], version, &mut rng);
        version += 1;
    }
    // Random edits: deletions, duplications and garbage inserted anywhere.
    let garbage = [
        "{",
        "}",
        "@",
        "(",
        "->",
        ":",
        ";",
        "\"",
        "[[",
        "😀",
        "\r",
        "map[",
        "/*",
        "#decorator(",
    ];
    let mut text = RICH.to_string();
    for _ in 0..150 {
        let bounds: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let a = bounds[rng.below(bounds.len())];
        let b = bounds[rng.below(bounds.len())];
        let (a, b) = (a.min(b), a.max(b).min(a.min(b) + 12));
        let b = bounds
            .iter()
            .copied()
            .find(|&x| x >= b)
            .unwrap_or(text.len());
        match rng.below(3) {
            0 => text.replace_range(a..b, ""),
            1 => text.insert_str(a, garbage[rng.below(garbage.len())]),
            _ => {
                let piece = text[a..b].to_string();
                text.insert_str(a, &piece);
            }
        }
        check(&mut c, &text, version, &mut rng);
        version += 1;
        if rng.below(10) == 0 {
            text = RICH.to_string();
        }
    }
    // Still serving, and still right.
    c.change(&doc, version, RICH);
    let h = c.at("textDocument/hover", &doc, 12, 16);
    assert!(
        h["result"]["contents"]["value"]
            .as_str()
            .unwrap_or("")
            .contains("struct demo.shop.Money"),
        "{h}"
    );
    // Inline union branches are listed once, as definitions with their fields.
    let syms = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": doc } }),
    );
    let event = syms["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Event")
        .unwrap()
        .clone();
    let branches: Vec<&str> = event["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(branches, ["Added", "Removed"], "{event}");
    assert_eq!(event["children"][0]["children"][0]["name"], "item");
    assert_eq!(c.shutdown().code(), Some(0));
}

/// The time of a didChange -> publishDiagnostics round on a workspace of 2,000 definitions
/// (20 files of 100, each file importing the one before), printed (run with
/// `--nocapture`); not asserted, as it depends on the machine and the build.
#[test]
fn a_2000_definition_workspace_answers_a_change() {
    let p = Project::new();
    let files = 20;
    for f in 0..files {
        let mut s = String::new();
        if f > 0 {
            s.push_str(&format!("import \"f{}.bop\"\n", f - 1));
        }
        for d in 0..100 {
            let prev = if f > 0 {
                format!("S{}_{}", f - 1, d)
            } else {
                "int32".to_string()
            };
            match d % 4 {
                0 => s.push_str(&format!("struct S{f}_{d} {{ a: {prev}; b: float64; }}\n")),
                1 => s.push_str(&format!(
                    "message S{f}_{d} {{ a(1): string; b(2): S{f}_{}; }}\n",
                    d - 1
                )),
                2 => s.push_str(&format!("enum S{f}_{d} {{ A = 0; B = 1; C = 2; }}\n")),
                _ => s.push_str(&format!(
                    "union S{f}_{d} {{ X(1): {{ v: S{f}_{}; }}; Y(2): message {{ w(1): string; }}; }}\n",
                    d - 3
                )),
            }
        }
        p.write(&format!("f{f}.bop"), &s);
    }
    let last = format!("f{}.bop", files - 1);
    let text = p.read(&last);
    let doc = uri(&p, &last);
    let mut c = Client::start(&p);
    c.open(&doc, &text);
    let d = c.diagnostics(&doc);
    assert_eq!(d, Vec::<Value>::new());
    let mut times = Vec::new();
    for round in 0..10 {
        let changed = if round % 2 == 0 {
            text.replacen("b: float64;", "b: float64x;", 1)
        } else {
            text.clone()
        };
        let start = Instant::now();
        c.change(&doc, round + 2, &changed);
        let d = c.diagnostics(&doc);
        times.push(start.elapsed());
        assert_eq!(d.len(), usize::from(round % 2 == 0), "{d:?}");
    }
    // A request over the whole workspace (references) after a change.
    let start = Instant::now();
    let r = c.request(
        "textDocument/references",
        json!({ "textDocument": { "uri": doc }, "position": { "line": 1, "character": 8 },
                "context": { "includeDeclaration": true } }),
    );
    let whole = start.elapsed();
    assert!(r["result"].as_array().is_some_and(|a| !a.is_empty()), "{r}");
    times.sort();
    eprintln!(
        "2000 definitions in {files} files: didChange -> diagnostics median {:?} (min {:?}, max {:?}); references over the workspace {:?}",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        whole
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn imports_through_the_configuration_and_files_changed_on_disk() {
    let p = Project::new();
    p.write("bebop.yml", "include: [\"shared\"]\n")
        .write(
            "shared/common.bop",
            "/// Shared.\nstruct Common { x: int32; }\n",
        )
        .write(
            "schemas/a.bop",
            "import \"common.bop\"\nimport \"later.bop\"\nstruct A { c: Common; }\n",
        );
    let a = uri(&p, "schemas/a.bop");
    let common = uri(&p, "shared/common.bop");
    let mut c = Client::start(&p);
    c.open(&a, &p.read("schemas/a.bop"));
    // `later.bop` does not exist yet.
    let d = c.diagnostics(&a);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "E031");
    // The import found in the include directory: definition and hover.
    let def = c.at("textDocument/definition", &a, 2, 15);
    assert_eq!(def["result"]["uri"], common.as_str(), "{def}");
    // The missing file appears on disk: the import is found.
    p.write("shared/later.bop", "struct Later {}\n");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": uri(&p, "shared/later.bop"), "type": 1 }] }),
    );
    assert_eq!(c.diagnostics(&a), Vec::<Value>::new());
    // The imported file changes on disk (not open): the importer is checked again.
    p.write("shared/common.bop", "struct Other { x: int32; }\n");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": common, "type": 2 }] }),
    );
    let d = c.diagnostics(&a);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "E040");
    assert!(
        d[0]["message"].as_str().unwrap().contains("Common"),
        "{d:?}"
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn exit_without_shutdown_is_status_1() {
    let p = Project::new();
    let mut c = Client::start(&p);
    c.notify("exit", Value::Null);
    c.stdin = None;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = c.child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < TIMEOUT, "bebopc lsp did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(1));
}
