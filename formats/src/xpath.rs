//! The XPath 1.0 that ITS 2.0 global rules select with (`selector`), as
//! patterns matched against an element and its ancestors:
//!
//! * absolute and relative location paths of child (`/`) and
//!   descendant-or-self (`//`) steps, the last one possibly an attribute
//!   (`@alt`, `@*`); `.` and unions (`|`);
//! * name tests with or without a prefix (prefixes resolved to namespaces
//!   where both sides declare them), `*`, `node()`;
//! * predicates: attribute and child tests (`[@type]`, `[title]`),
//!   comparisons of attributes, children, `text()`, `name()` and
//!   `local-name()` with strings (`=`, `!=`), `contains()`,
//!   `starts-with()`, `not()`, `and`, `or`, parentheses and positions
//!   (`[2]`, `[last()]`).
//!
//! Anything else is refused with the selector named, rather than matched
//! wrongly.

use std::collections::HashMap;

use crate::xml::Elem;

/// A parsed selector.
#[derive(Debug, Clone)]
pub(crate) struct Selector {
    paths: Vec<Path>,
}

#[derive(Debug, Clone)]
struct Path {
    absolute: bool,
    steps: Vec<Step>,
}

#[derive(Debug, Clone)]
struct Step {
    /// Whether the step follows `//` (any depth below the previous one).
    descendant: bool,
    attribute: bool,
    test: Test,
    predicates: Vec<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
enum Test {
    Any,
    /// `.`
    Current,
    Name {
        prefix: Option<String>,
        local: String,
    },
}

#[derive(Debug, Clone)]
enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Compare {
        left: Value,
        right: Value,
        equal: bool,
    },
    Contains(Value, Value),
    StartsWith(Value, Value),
    /// An attribute or child exists.
    Exists(Value),
    Position(usize),
    Last,
}

#[derive(Debug, Clone)]
enum Value {
    Literal(String),
    Attribute(Test),
    Child(Test),
    Text,
    Name,
    LocalName,
}

/// Namespace prefixes in scope: the rules' (for the selector) and the
/// document's.
pub(crate) struct Scope<'a> {
    /// Prefix → URI where the rule was written.
    pub rules: &'a HashMap<String, String>,
    /// Prefix → URI in the document.
    pub document: &'a HashMap<String, String>,
}

/// One element and what is above it, for matching.
pub(crate) struct Node<'a, 't> {
    /// The element, then its ancestors up to the root.
    pub chain: &'a [&'a Elem<'t>],
    pub src: &'a str,
}

impl Selector {
    /// Parses `selector`; the error says what is not supported.
    pub(crate) fn parse(selector: &str) -> Result<Self, String> {
        let mut p = Parser {
            s: selector.as_bytes(),
            at: 0,
        };
        let mut paths = vec![p.path()?];
        loop {
            p.space();
            if p.eat("|") {
                paths.push(p.path()?);
            } else {
                break;
            }
        }
        p.space();
        if p.at < p.s.len() {
            return Err(format!("unexpected {:?}", &selector[p.at..]));
        }
        Ok(Selector { paths })
    }

    /// Whether the selector selects the element `node.chain[0]`.
    pub(crate) fn selects(&self, node: &Node<'_, '_>, scope: &Scope<'_>) -> bool {
        self.paths.iter().any(|path| {
            path.steps.last().is_some_and(|s| !s.attribute)
                && matches_from(path, path.steps.len(), node.chain, node, scope)
        })
    }

    /// The attributes of `node.chain[0]` the selector selects (by name).
    pub(crate) fn attributes(&self, node: &Node<'_, '_>, scope: &Scope<'_>) -> Vec<String> {
        let elem = node.chain[0];
        let mut out = Vec::new();
        for path in &self.paths {
            let Some(last) = path.steps.last().filter(|s| s.attribute) else {
                continue;
            };
            let n = path.steps.len() - 1;
            // `@a` and `//@a`: any element's; `/@a`: the document's (none);
            // `p//@a`: of `p` or any element below it.
            let owner = match (n, last.descendant) {
                (0, descendant) => descendant || !path.absolute,
                (_, true) => (0..node.chain.len())
                    .any(|skip| matches_from(path, n, &node.chain[skip..], node, scope)),
                (_, false) => matches_from(path, n, node.chain, node, scope),
            };
            if !owner {
                continue;
            }
            for (name, _) in elem.attrs(node.src) {
                if name.starts_with("xmlns") {
                    continue;
                }
                if test_name(&last.test, &name, scope)
                    && last.predicates.iter().all(|p| eval(p, node, scope, 1, 1))
                    && !out.contains(&name)
                {
                    out.push(name);
                }
            }
        }
        out
    }
}

/// Whether the first `n` steps of `path` select `chain[0]` (with `chain` its
/// ancestors).
fn matches_from(
    path: &Path,
    n: usize,
    chain: &[&Elem<'_>],
    node: &Node<'_, '_>,
    scope: &Scope<'_>,
) -> bool {
    if n == 0 {
        // Nothing left: an absolute path must have reached the root's parent
        // (the document), a relative one matches anywhere.
        return !path.absolute || chain.is_empty();
    }
    let Some((elem, above)) = chain.split_first() else {
        return false;
    };
    let step = &path.steps[n - 1];
    if step.test == Test::Current {
        return step.predicates.is_empty() && matches_from(path, n - 1, chain, node, scope);
    }
    if !step_matches(step, elem, above, node.src, scope) {
        return false;
    }
    if step.descendant {
        // Any ancestor (or the document) may match the steps before.
        (0..=above.len()).any(|skip| matches_from(path, n - 1, &above[skip..], node, scope))
    } else {
        matches_from(path, n - 1, above, node, scope)
    }
}

/// Whether `elem` (below `above`) passes a step's test and predicates.
fn step_matches(
    step: &Step,
    elem: &Elem<'_>,
    above: &[&Elem<'_>],
    src: &str,
    scope: &Scope<'_>,
) -> bool {
    if !test_name(&step.test, elem.name, scope) {
        return false;
    }
    if step.predicates.is_empty() {
        return true;
    }
    // Position among the siblings passing the test.
    let (position, size) = match above.first() {
        Some(parent) => {
            let same: Vec<&Elem<'_>> = parent
                .elems()
                .filter(|e| test_name(&step.test, e.name, scope))
                .collect();
            let at = same
                .iter()
                .position(|e| e.start == elem.start)
                .map_or(1, |i| i + 1);
            (at, same.len())
        }
        None => (1, 1),
    };
    let chain = [elem];
    let node = Node { chain: &chain, src };
    step.predicates
        .iter()
        .all(|p| eval(p, &node, scope, position, size))
}

fn test_name(test: &Test, name: &str, scope: &Scope<'_>) -> bool {
    match test {
        Test::Any => true,
        Test::Current => false,
        Test::Name { prefix, local } => {
            let (their_prefix, their_local) = match name.split_once(':') {
                Some((p, l)) => (Some(p), l),
                None => (None, name),
            };
            if their_local != local {
                return false;
            }
            match (prefix.as_deref(), their_prefix) {
                (None, None) => true,
                (Some(a), Some(b)) => match (scope.rules.get(a), scope.document.get(b)) {
                    (Some(x), Some(y)) => x == y,
                    _ => a == b,
                },
                // A prefixed test names a namespace an unprefixed name is
                // in only through a default namespace: compared by URI.
                (Some(a), None) => scope
                    .rules
                    .get(a)
                    .is_some_and(|uri| scope.document.get("").is_some_and(|d| d == uri)),
                (None, Some(_)) => false,
            }
        }
    }
}

fn eval(expr: &Expr, node: &Node<'_, '_>, scope: &Scope<'_>, position: usize, size: usize) -> bool {
    match expr {
        Expr::Or(a, b) => {
            eval(a, node, scope, position, size) || eval(b, node, scope, position, size)
        }
        Expr::And(a, b) => {
            eval(a, node, scope, position, size) && eval(b, node, scope, position, size)
        }
        Expr::Not(e) => !eval(e, node, scope, position, size),
        Expr::Compare { left, right, equal } => {
            let (l, r) = (values(left, node, scope), values(right, node, scope));
            // XPath: true when some pair of values compares so.
            l.iter().any(|a| r.iter().any(|b| (a == b) == *equal))
        }
        Expr::Contains(a, b) => {
            let (a, b) = (first(a, node, scope), first(b, node, scope));
            a.contains(&b)
        }
        Expr::StartsWith(a, b) => {
            let (a, b) = (first(a, node, scope), first(b, node, scope));
            a.starts_with(&b)
        }
        Expr::Exists(v) => !values(v, node, scope).is_empty(),
        Expr::Position(n) => position == *n,
        Expr::Last => position == size,
    }
}

/// The string values of `value` on the element: one per attribute or child
/// selected, one for a literal.
fn values(value: &Value, node: &Node<'_, '_>, scope: &Scope<'_>) -> Vec<String> {
    let elem = node.chain[0];
    let unescape = |raw: &str| {
        quick_xml::escape::unescape(raw).map_or_else(|_| raw.to_owned(), |v| v.into_owned())
    };
    match value {
        Value::Literal(s) => vec![s.clone()],
        Value::Attribute(test) => elem
            .attrs(node.src)
            .into_iter()
            .filter(|(name, _)| !name.starts_with("xmlns") && test_name(test, name, scope))
            .map(|(_, v)| unescape(&v))
            .collect(),
        Value::Child(test) => elem
            .elems()
            .filter(|e| test_name(test, e.name, scope))
            .map(|e| e.text(node.src))
            .collect(),
        Value::Text => vec![elem.text(node.src)],
        Value::Name => vec![elem.name.to_owned()],
        Value::LocalName => vec![elem.name.rsplit(':').next().unwrap_or(elem.name).to_owned()],
    }
}

fn first(value: &Value, node: &Node<'_, '_>, scope: &Scope<'_>) -> String {
    values(value, node, scope)
        .into_iter()
        .next()
        .unwrap_or_default()
}

struct Parser<'s> {
    s: &'s [u8],
    at: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.space();
        if self.s[self.at.min(self.s.len())..].starts_with(token.as_bytes()) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn rest(&self) -> String {
        String::from_utf8_lossy(&self.s[self.at.min(self.s.len())..]).into_owned()
    }

    fn path(&mut self) -> Result<Path, String> {
        self.space();
        let mut absolute = false;
        let mut descendant = false;
        if self.eat("//") {
            absolute = true;
            descendant = true;
        } else if self.eat("/") {
            absolute = true;
        }
        let mut steps = Vec::new();
        loop {
            steps.push(self.step(descendant)?);
            if self.eat("//") {
                descendant = true;
            } else if self.eat("/") {
                descendant = false;
            } else {
                break;
            }
            if steps.last().is_some_and(|s: &Step| s.attribute) {
                return Err("a step after an attribute".to_owned());
            }
        }
        Ok(Path { absolute, steps })
    }

    fn step(&mut self, descendant: bool) -> Result<Step, String> {
        self.space();
        let attribute = self.eat("@") || self.eat("attribute::");
        // The only axes written out that patterns use.
        if !attribute && !self.eat("child::") && self.eat("descendant-or-self::node()/") {
            return self.step(true);
        }
        let test = if self.eat("..") {
            return Err("the parent step (..)".to_owned());
        } else if self.eat(".") {
            Test::Current
        } else {
            self.test()?
        };
        let mut predicates = Vec::new();
        while self.eat("[") {
            predicates.push(self.or()?);
            if !self.eat("]") {
                return Err(format!("a predicate not closed before {:?}", self.rest()));
            }
        }
        Ok(Step {
            descendant,
            attribute,
            test,
            predicates,
        })
    }

    fn test(&mut self) -> Result<Test, String> {
        self.space();
        if self.eat("*") {
            return Ok(Test::Any);
        }
        if self.eat("node()") {
            return Ok(Test::Any);
        }
        let name = self.name();
        if name.is_empty() {
            return Err(format!("a name expected at {:?}", self.rest()));
        }
        if name.ends_with(':') && self.eat("*") {
            return Err(format!("the wildcard {name}*"));
        }
        if self.s.get(self.at) == Some(&b'(') {
            return Err(format!("the node test {name}()"));
        }
        Ok(match name.split_once(':') {
            Some((prefix, local)) => Test::Name {
                prefix: Some(prefix.to_owned()),
                local: local.to_owned(),
            },
            None => Test::Name {
                prefix: None,
                local: name,
            },
        })
    }

    fn name(&mut self) -> String {
        self.space();
        let start = self.at;
        while self.s.get(self.at).is_some_and(|&b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':') || b >= 0x80
        }) {
            // `::` is an axis, not a prefix.
            if self.s[self.at..].starts_with(b"::") {
                break;
            }
            self.at += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.at]).into_owned()
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.keyword("or") {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.comparison()?;
        while self.keyword("and") {
            left = Expr::And(Box::new(left), Box::new(self.comparison()?));
        }
        Ok(left)
    }

    fn keyword(&mut self, word: &str) -> bool {
        self.space();
        let rest = &self.s[self.at.min(self.s.len())..];
        if rest.starts_with(word.as_bytes())
            && rest
                .get(word.len())
                .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'(' | b'@' | b'\'' | b'"'))
        {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    fn comparison(&mut self) -> Result<Expr, String> {
        self.space();
        if self.eat("(") {
            let inner = self.or()?;
            if !self.eat(")") {
                return Err("a parenthesis not closed".to_owned());
            }
            return Ok(inner);
        }
        if let Some(expr) = self.function()? {
            return Ok(expr);
        }
        self.space();
        if self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
            let start = self.at;
            while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
                self.at += 1;
            }
            let n = String::from_utf8_lossy(&self.s[start..self.at])
                .parse()
                .map_err(|_| "a position too large".to_owned())?;
            return Ok(Expr::Position(n));
        }
        let left = self.value()?;
        let equal = if self.eat("!=") {
            false
        } else if self.eat("=") {
            true
        } else {
            return match left {
                Value::Literal(_) => Err("a string alone as a predicate".to_owned()),
                other => Ok(Expr::Exists(other)),
            };
        };
        let right = self.value()?;
        Ok(Expr::Compare { left, right, equal })
    }

    /// `not()`, `contains()`, `starts-with()`, `last()`.
    fn function(&mut self) -> Result<Option<Expr>, String> {
        let start = self.at;
        for name in ["not", "contains", "starts-with", "last"] {
            self.at = start;
            if self.keyword(name) && self.eat("(") {
                let expr = match name {
                    "not" => Expr::Not(Box::new(self.or()?)),
                    "last" => Expr::Last,
                    _ => {
                        let a = self.value()?;
                        if !self.eat(",") {
                            return Err(format!("{name}() takes two arguments"));
                        }
                        let b = self.value()?;
                        if name == "contains" {
                            Expr::Contains(a, b)
                        } else {
                            Expr::StartsWith(a, b)
                        }
                    }
                };
                if !self.eat(")") {
                    return Err(format!("{name}( not closed"));
                }
                return Ok(Some(expr));
            }
        }
        self.at = start;
        Ok(None)
    }

    fn value(&mut self) -> Result<Value, String> {
        self.space();
        for quote in [b'\'', b'"'] {
            if self.s.get(self.at) == Some(&quote) {
                let start = self.at + 1;
                let len = self.s[start..]
                    .iter()
                    .position(|&b| b == quote)
                    .ok_or_else(|| "a string not closed".to_owned())?;
                self.at = start + len + 1;
                return Ok(Value::Literal(
                    String::from_utf8_lossy(&self.s[start..start + len]).into_owned(),
                ));
            }
        }
        if self.eat("@") {
            return Ok(Value::Attribute(self.test()?));
        }
        if self.eat("text()") {
            return Ok(Value::Text);
        }
        if self.eat("local-name()") {
            return Ok(Value::LocalName);
        }
        if self.eat("name()") {
            return Ok(Value::Name);
        }
        if self.eat(".") {
            return Ok(Value::Text);
        }
        let test = self.test()?;
        if self.s.get(self.at).is_some_and(|&b| b == b'/' || b == b'[') {
            return Err(format!("a path inside a predicate at {:?}", self.rest()));
        }
        Ok(Value::Child(test))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::parse;

    const DOC: &str = r#"<doc xmlns:h="urn:h" xmlns="urn:d">
        <head><title>T</title></head>
        <body>
            <p class="note" id="a">One<code>x</code></p>
            <p id="b">Two <img alt="A picture" src="p.png"/></p>
            <h:p>Three</h:p>
            <list><item>1</item><item>2</item><item type="x">3</item></list>
        </body>
    </doc>"#;

    /// The `id`, else the text, of every element the selector selects, and
    /// the `name=value` of every attribute.
    fn select(selector: &str) -> Vec<String> {
        let tree = parse(DOC).unwrap();
        let rules: HashMap<String, String> = [("x".to_owned(), "urn:h".to_owned())].into();
        let document: HashMap<String, String> = [
            ("h".to_owned(), "urn:h".to_owned()),
            (String::new(), "urn:d".to_owned()),
        ]
        .into();
        let scope = Scope {
            rules: &rules,
            document: &document,
        };
        let selector = Selector::parse(selector).unwrap();
        let mut out = Vec::new();
        fn walk<'t>(
            elem: &'t Elem<'t>,
            above: &mut Vec<&'t Elem<'t>>,
            f: &mut dyn FnMut(&[&Elem<'t>]),
        ) {
            above.insert(0, elem);
            f(above);
            for child in elem.elems() {
                walk(child, above, f);
            }
            above.remove(0);
        }
        let root = crate::xml::root(&tree).unwrap();
        walk(root, &mut Vec::new(), &mut |chain| {
            let node = Node { chain, src: DOC };
            let elem = chain[0];
            if selector.selects(&node, &scope) {
                out.push(elem.attr(DOC, "id").unwrap_or_else(|| elem.text(DOC)));
            }
            for name in selector.attributes(&node, &scope) {
                out.push(format!(
                    "{name}={}",
                    elem.attr(DOC, &name).unwrap_or_default()
                ));
            }
        });
        out
    }

    #[test]
    fn paths_select_elements_and_attributes() {
        assert_eq!(select("//p"), ["a", "b"]);
        assert_eq!(select("/doc/body/p"), ["a", "b"]);
        assert_eq!(select("/body/p"), Vec::<String>::new());
        assert_eq!(select("body//code"), ["x"]);
        assert_eq!(select("//p/code | //title"), ["T", "x"]);
        assert_eq!(select("//x:p"), ["Three"]);
        assert_eq!(select("//img/@alt"), ["alt=A picture"]);
        assert_eq!(
            select("//p//@*"),
            ["class=note", "id=a", "id=b", "alt=A picture", "src=p.png"]
        );
        assert_eq!(select("//*[@class='note']"), ["a"]);
        assert_eq!(select("//p[@class]"), ["a"]);
        assert_eq!(select("//p[not(@class)]"), ["b"]);
        assert_eq!(select("//p[code]"), ["a"]);
        assert_eq!(select("//p[@id='a' or @id='b'][code]"), ["a"]);
        assert_eq!(select("//item[2]"), ["2"]);
        assert_eq!(select("//item[last()]"), ["3"]);
        assert_eq!(select("//item[@type != 'x' or not(@type)][. = '1']"), ["1"]);
        assert_eq!(select("//*[contains(@src, '.png')]"), [""]);
        assert_eq!(select("//*[starts-with(local-name(), 'ti')]"), ["T"]);
        assert_eq!(select("//list/item[text()='3']"), ["3"]);
    }

    #[test]
    fn unsupported_syntax_is_named() {
        for (selector, what) in [
            ("//p/..", "parent"),
            ("//p[count(code) > 1]", "count"),
            ("//p/@id/x", "after an attribute"),
            ("//p[", "name expected"),
            ("//x:*", "wildcard"),
            ("//p[a/b]", "path inside a predicate"),
        ] {
            let error = Selector::parse(selector).unwrap_err();
            assert!(error.contains(what), "{selector}: {error}");
        }
    }
}
