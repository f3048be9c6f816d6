use super::*;
use crate::Compiler;

fn locations(text: &str) -> Vec<Location> {
    let result = Compiler::new().compile_source("s.bop", text);
    assert!(!result.has_errors(), "{}", result.render_terminal(false));
    let model = result.model.as_ref().expect("model");
    source_code_info(model, &model.schemas[0], &result.sources)
        .expect("source info")
        .locations
        .expect("locations")
}

#[test]
fn paths_spans_and_order() {
    let locs = locations(
        "struct A {\n    x: int32;\n\ty: int32;\n}\nenum E { Z = 0; O = 1; }\nunion U { P(1): { a: int32; }; }\n",
    );
    let paths: Vec<Option<Vec<i32>>> = locs.iter().map(|l| l.path.clone()).collect();
    let expected: Vec<Vec<i32>> = vec![
        vec![5, 0],
        vec![5, 0, 1, 0],
        vec![5, 0, 1, 1],
        vec![5, 1],
        vec![5, 1, 2, 0],
        vec![5, 1, 2, 1],
        vec![5, 2],
        vec![5, 2, 1, 0],
        vec![5, 2, 5, 0],
        vec![5, 2, 5, 0, 1, 0],
    ];
    assert_eq!(paths, expected.into_iter().map(Some).collect::<Vec<_>>());
    assert_eq!(locs[0].span, Some([1, 1, 4, 2]));
    assert_eq!(locs[1].span.map(|s| s[..2].to_vec()), Some(vec![2, 5]));
    // Columns count bytes: a tab is one column.
    assert_eq!(locs[2].span.map(|s| s[..2].to_vec()), Some(vec![3, 2]));
}

#[test]
fn members_nested_deeper_than_two_levels_have_no_path() {
    let locs = locations(
        "struct A {\n    struct B {\n        struct C { x: int32; }\n        c: C;\n    }\n    b: B;\n}\n",
    );
    let paths: Vec<Option<Vec<i32>>> = locs.iter().map(|l| l.path.clone()).collect();
    assert_eq!(
        paths,
        vec![
            Some(vec![5, 0]),
            Some(vec![5, 0, 1, 0]),
            Some(vec![5, 0, 5, 0]),
            Some(vec![5, 0, 5, 0, 1, 0]),
            Some(vec![5, 0, 5, 0, 5, 0]),
            None,
        ]
    );
}

#[test]
fn definitions_start_after_decorators_and_modifiers_members_do_not() {
    let locs = locations(
        "import \"bebop/decorators.bop\"\n@flags\nenum F : byte { N = 0; A = 1; }\nlocal const int32 X = 1;\nmut struct M { x: int32; }\nmessage G {\n    @deprecated(\"old\") x(1): int32;\n}\n",
    );
    let starts: Vec<Vec<i32>> = locs
        .iter()
        .map(|l| l.span.expect("span")[..2].to_vec())
        .collect();
    // F, its members, X, M, M.x, G, G.x.
    assert_eq!(
        starts,
        [
            [3, 1],
            [3, 17],
            [3, 24],
            [4, 7],
            [5, 5],
            [5, 16],
            [6, 1],
            [7, 5]
        ]
    );
    assert_eq!(locs[0].span, Some([3, 1, 3, 32]));
}

#[test]
fn lines_and_columns_agree_with_the_source_map_on_ascii() {
    let text = "a\r\nbc d\rd\n\nxyz w";
    let file = SourceFile::new("x.bop", text.to_string());
    let fc = FileComments::new(&file, crate::source::SourceId(0));
    for offset in 0..=text.len() as u32 {
        let lc = file.line_col(offset);
        assert_eq!(fc.line(offset), lc.line, "line at {offset}");
        assert_eq!(fc.column(offset), lc.column, "column at {offset}");
    }
    // Columns are bytes, not characters.
    let wide = SourceFile::new("w.bop", "é\tx".to_string());
    let fc = FileComments::new(&wide, crate::source::SourceId(0));
    assert_eq!(fc.column(3), 4);
    assert_eq!(fc.column(4), 5);
}

#[test]
fn comments_follow_the_reference_grouping() {
    let locs = locations(
        "// file header\n\n/* detached\n * block */\n\n/// Doc one\n/// Doc two\nstruct A {\n    // about x\n    x: int32; // x trailing\n    y: int32;\n} // after A\n\n// a group\n// of two lines\n\nenum E { Z = 0; }\n",
    );
    // A group's text is its last comment; the last group leads, the others are detached.
    assert_eq!(locs[0].leading_comments.as_deref(), Some("Doc two"));
    assert_eq!(
        locs[0].detached_comments,
        Some(vec![
            "file header".to_string(),
            "detached\n * block".to_string()
        ])
    );
    // Trailing comments belong to the element's first token only.
    assert_eq!(locs[0].trailing_comments, None);
    assert_eq!(locs[1].leading_comments.as_deref(), Some("about x"));
    assert_eq!(locs[1].trailing_comments, None);
    // A comment after the previous line's last token is that token's trailing trivia.
    assert_eq!(locs[2].leading_comments, None);
    // A blank line does not detach the last group from the element.
    assert_eq!(locs[3].leading_comments.as_deref(), Some("of two lines"));
    assert_eq!(locs[3].detached_comments, None);
}

#[test]
fn comment_markers() {
    let locs = locations(
        "/** kept whole */\nstruct A { x: int32; }\n/*   spaced  */\nstruct B { x: int32; }\nstruct /* after the keyword */ C { x: int32; }\n",
    );
    assert_eq!(
        locs[0].leading_comments.as_deref(),
        Some("/** kept whole */")
    );
    assert_eq!(locs[2].leading_comments.as_deref(), Some("spaced"));
    assert_eq!(
        locs[4].trailing_comments.as_deref(),
        Some("after the keyword")
    );
}

#[test]
fn a_schema_without_definitions_has_no_source_info() {
    let result = Compiler::new().compile_source("s.bop", "edition = \"2026\"\n");
    let model = result.model.as_ref().expect("model");
    assert!(source_code_info(model, &model.schemas[0], &result.sources).is_none());
}
