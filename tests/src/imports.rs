//! The import graph between sibling modules of a crate, read from its sources: which child of a
//! module refers to which other child of the same module, and the cycles among them.
//!
//! A crate is walked from its root file through its `mod` items (out-of-line files by the
//! usual `foo.rs` / `foo/mod.rs` rule or `#[path]`, inline `mod` blocks too), whatever their
//! `#[cfg]`, so every platform's modules count. A module refers to another through its `use`
//! trees and through the `crate::`, `super::` and `self::` paths in its code and in the tokens
//! of its macro calls. A path is resolved through the modules it names and through the names
//! they import, so `use super::Thing` reaches the sibling a parent re-exports `Thing` from.
//!
//! References between a module and its own ancestors or descendants are not edges: a parent
//! uses its children and children use their parent's items by design. Nor is anything under
//! `#[cfg(test)]`: a test module is a leaf nothing imports, so it cannot make the shipped code
//! depend on itself (an encoder's round-trip test reads with the parser, the parser's writes
//! with the encoder, and neither module depends on the other). Every other reference
//! from inside module `a::b` to inside `a::c` is the edge `b → c` among the children of `a`;
//! a cycle of such edges is what [`cycles`] reports.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module, as the path of names from its crate root (empty for the root).
pub type ModPath = Vec<String>;

/// One reference that makes an edge, for the report.
#[derive(Debug, Clone)]
pub struct Reference {
    /// The file the reference is in.
    pub file: PathBuf,
    /// The module that refers.
    pub from: ModPath,
    /// The module referred to.
    pub to: ModPath,
}

/// A cycle among the children of `parent`: each child refers to the next, the last to the
/// first; `evidence` holds one reference per edge. `tangled` is every child on some cycle
/// with these (the strongly connected set the cycle is one of).
#[derive(Debug, Clone)]
pub struct Cycle {
    /// The crate root file.
    pub root: PathBuf,
    /// The module whose children form the cycle.
    pub parent: ModPath,
    /// The children, in cycle order.
    pub children: Vec<String>,
    /// The children that refer to each other through some cycle, this one's among them.
    pub tangled: BTreeSet<String>,
    /// Every edge between the tangled children, with one reference each.
    pub edges: Vec<Reference>,
    /// One reference per edge, in the same order.
    pub evidence: Vec<Reference>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parent =
            if self.parent.is_empty() { "crate".to_owned() } else { self.parent.join("::") };
        let tangled: Vec<&str> = self.tangled.iter().map(String::as_str).collect();
        writeln!(
            f,
            "{} ({}): {} → {} (tangled: {})",
            parent,
            self.root.display(),
            self.children.join(" → "),
            self.children[0],
            tangled.join(", ")
        )?;
        for r in &self.edges {
            writeln!(
                f,
                "    {} refers to {} ({})",
                r.from.join("::"),
                r.to.join("::"),
                r.file.display()
            )?;
        }
        Ok(())
    }
}

/// What the walk knows of one module.
#[derive(Debug, Default)]
struct Module {
    /// Its child modules.
    children: BTreeSet<String>,
    /// Names it imports (`use a::b as c;` gives `c` → `a::b`), as written, unresolved.
    imports: BTreeMap<String, Vec<String>>,
    /// Paths it refers to (`use` targets and paths in code), as written.
    paths: Vec<Vec<String>>,
    /// The file it is written in.
    file: PathBuf,
}

/// Every module of the crate whose root file is `root`.
#[derive(Debug)]
pub struct Crate {
    root: PathBuf,
    modules: BTreeMap<ModPath, Module>,
}

impl Crate {
    /// Reads the crate rooted at `root` (a `lib.rs`, `main.rs` or any other crate root file).
    pub fn read(root: &Path) -> Result<Crate, String> {
        let mut krate = Crate { root: root.to_path_buf(), modules: BTreeMap::new() };
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        krate.read_file(Vec::new(), root, &dir)?;
        Ok(krate)
    }

    /// The crate's root file.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The files of the crate's modules other than its root.
    pub fn module_files(&self) -> Vec<PathBuf> {
        self.modules.values().map(|m| m.file.clone()).filter(|f| *f != self.root).collect()
    }

    /// Reads `file` as module `path`, whose out-of-line children live in `dir`.
    fn read_file(&mut self, path: ModPath, file: &Path, dir: &Path) -> Result<(), String> {
        let text = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        self.read_items(path, &parsed.items, file, dir)
    }

    fn read_items(
        &mut self,
        path: ModPath,
        items: &[syn::Item],
        file: &Path,
        dir: &Path,
    ) -> Result<(), String> {
        let mut module = Module { file: file.to_path_buf(), ..Module::default() };
        let mut nested = Vec::new();
        let items: Vec<&syn::Item> = items.iter().filter(|item| !test_only(item)).collect();
        for item in items.iter().copied() {
            match item {
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    module.children.insert(name.clone());
                    nested.push((name, m));
                }
                syn::Item::Use(u) => {
                    let mut prefix = Vec::new();
                    use_tree(&u.tree, &mut prefix, &mut module);
                }
                _ => {}
            }
        }
        let mut visitor = Paths(&mut module.paths);
        for item in items.iter().copied() {
            if !matches!(item, syn::Item::Mod(_) | syn::Item::Use(_)) {
                visitor.visit_item(item);
            }
        }
        self.modules.insert(path.clone(), module);
        for (name, m) in nested {
            let mut child = path.clone();
            child.push(name.clone());
            let explicit = m.attrs.iter().find_map(path_attribute);
            match &m.content {
                Some((_, items)) => {
                    self.read_items(child, items, file, &dir.join(&name))?;
                }
                None => {
                    let (child_file, child_dir) = match explicit {
                        Some(p) => {
                            let f = dir.join(p);
                            let d = f.parent().unwrap_or(dir).to_path_buf();
                            (f, d)
                        }
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            if flat.exists() {
                                (flat, dir.join(&name))
                            } else {
                                (dir.join(&name).join("mod.rs"), dir.join(&name))
                            }
                        }
                    };
                    self.read_file(child, &child_file, &child_dir)?;
                }
            }
        }
        Ok(())
    }

    /// The module a path written in module `at` names, after following imports: the deepest
    /// module it reaches (an item's own module when the path ends in an item). `None` for a
    /// path into another crate.
    fn resolve(&self, at: &ModPath, written: &[String]) -> Option<ModPath> {
        let (mut path, rest) = self.anchor(at, written)?;
        let mut rest: Vec<String> = rest.to_vec();
        // Following imports can loop (`use self::a as b; use self::b as a;`): bounded.
        for _ in 0..32 {
            let Some(first) = rest.first().cloned() else { return Some(path) };
            let module = self.modules.get(&path)?;
            if module.children.contains(&first) {
                path.push(first);
                rest.remove(0);
                continue;
            }
            match module.imports.get(&first) {
                Some(target) => {
                    let mut next: Vec<String> = target.clone();
                    next.extend(rest.drain(1..));
                    let (anchored, tail) = self.anchor(&path, &next)?;
                    path = anchored;
                    rest = tail.to_vec();
                }
                None => return Some(path),
            }
        }
        Some(path)
    }

    /// Where a written path starts: `crate`, `super`, `self`, a child module or an imported
    /// name of `at`; `None` for anything else (another crate, a prelude name).
    fn anchor<'p>(&self, at: &ModPath, written: &'p [String]) -> Option<(ModPath, &'p [String])> {
        let first = written.first()?;
        match first.as_str() {
            "crate" => Some((Vec::new(), &written[1..])),
            "self" => Some((at.clone(), &written[1..])),
            "super" => {
                let mut path = at.clone();
                let mut i = 0;
                while written.get(i).map(String::as_str) == Some("super") {
                    path.pop()?;
                    i += 1;
                }
                Some((path, &written[i..]))
            }
            _ => {
                let module = self.modules.get(at)?;
                (module.children.contains(first) || module.imports.contains_key(first))
                    .then(|| (at.clone(), written))
            }
        }
    }

    /// Every reference between two modules neither of which contains the other.
    pub fn references(&self) -> Vec<Reference> {
        let mut out = Vec::new();
        for (from, module) in &self.modules {
            for written in &module.paths {
                let Some(to) = self.resolve(from, written) else { continue };
                if to.starts_with(from) || from.starts_with(&to) {
                    continue;
                }
                out.push(Reference { file: module.file.clone(), from: from.clone(), to });
            }
        }
        out
    }

    /// The cycles among sibling modules (one per strongly connected set of siblings).
    pub fn cycles(&self) -> Vec<Cycle> {
        // parent → (child → (child → the first reference making that edge))
        let mut graphs: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, Reference>>> =
            BTreeMap::new();
        for r in self.references() {
            let common = r.from.iter().zip(&r.to).take_while(|(a, b)| a == b).count();
            let parent = r.from[..common].to_vec();
            let (a, b) = (r.from[common].clone(), r.to[common].clone());
            graphs.entry(parent).or_default().entry(a).or_default().entry(b).or_insert(r);
        }
        let mut found = Vec::new();
        for (parent, edges) in graphs {
            for set in strongly_connected(&edges) {
                let children = cycle_through(&set, &edges);
                let evidence = children
                    .iter()
                    .zip(children.iter().cycle().skip(1))
                    .map(|(a, b)| edges[a][b].clone())
                    .collect();
                let inside = set
                    .iter()
                    .flat_map(|a| edges[a].iter().filter(|(b, _)| set.contains(*b)))
                    .map(|(_, r)| r.clone())
                    .collect();
                found.push(Cycle {
                    root: self.root.clone(),
                    parent: parent.clone(),
                    children,
                    tangled: set,
                    edges: inside,
                    evidence,
                });
            }
        }
        found
    }
}

/// Whether `item` exists only in test builds (`#[cfg(test)]`, `#[cfg(all(test, …))]`).
fn test_only(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Mod(m) => &m.attrs,
        syn::Item::Use(u) => &u.attrs,
        syn::Item::Fn(f) => &f.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Struct(s) => &s.attrs,
        syn::Item::Enum(e) => &e.attrs,
        syn::Item::Const(c) => &c.attrs,
        syn::Item::Static(s) => &s.attrs,
        syn::Item::Trait(t) => &t.attrs,
        _ => return false,
    };
    attrs.iter().any(|attr| {
        let syn::Meta::List(list) = &attr.meta else { return false };
        if !list.path.is_ident("cfg") {
            return false;
        }
        let tokens = list.tokens.to_string();
        let tokens = tokens.replace(' ', "");
        (tokens == "test" || tokens.starts_with("all(test") || tokens.contains(",test"))
            && !tokens.contains("not(test")
    })
}

/// The `#[path = "..."]` of a `mod` item.
fn path_attribute(attr: &syn::Attribute) -> Option<String> {
    let syn::Meta::NameValue(nv) = &attr.meta else { return None };
    if !nv.path.is_ident("path") {
        return None;
    }
    match &nv.value {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
        _ => None,
    }
}

/// Flattens a `use` tree into the module's imports and referred paths.
fn use_tree(tree: &syn::UseTree, prefix: &mut Vec<String>, module: &mut Module) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_tree(&p.tree, prefix, module);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let target = if name == "self" {
                prefix.clone()
            } else {
                let mut t = prefix.clone();
                t.push(name.clone());
                t
            };
            let local = if name == "self" { prefix.last().cloned() } else { Some(name) };
            if let Some(local) = local {
                module.imports.insert(local, target.clone());
            }
            module.paths.push(target);
        }
        syn::UseTree::Rename(r) => {
            let mut target = prefix.clone();
            if r.ident != "self" {
                target.push(r.ident.to_string());
            }
            module.imports.insert(r.rename.to_string(), target.clone());
            module.paths.push(target);
        }
        syn::UseTree::Glob(_) => module.paths.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_tree(tree, prefix, module);
            }
        }
    }
}

/// Collects the paths of code that start at `crate`, `super` or `self` (the only ones that can
/// name a sibling without an import), in items and in macro tokens alike.
struct Paths<'a>(&'a mut Vec<Vec<String>>);

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        // A one-name path is a local or an imported name, whose `use` is recorded already.
        if path.segments.len() > 1 {
            self.0.push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        macro_paths(mac.tokens.clone(), self.0);
        syn::visit::visit_macro(self, mac);
    }

    // Inline modules are walked as modules of their own.
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
}

/// The `crate::…`, `super::…` and `self::…` paths in a macro call's tokens.
fn macro_paths(tokens: proc_macro2::TokenStream, out: &mut Vec<Vec<String>>) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => macro_paths(g.stream(), out),
            TokenTree::Ident(id)
                if matches!(id.to_string().as_str(), "crate" | "super" | "self") =>
            {
                let mut path = vec![id.to_string()];
                let mut j = i + 1;
                loop {
                    let colons = matches!(
                        (tokens.get(j), tokens.get(j + 1)),
                        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                            if a.as_char() == ':' && b.as_char() == ':'
                    );
                    match tokens.get(j + 2) {
                        Some(TokenTree::Ident(next)) if colons => {
                            path.push(next.to_string());
                            j += 3;
                        }
                        _ => break,
                    }
                }
                if path.len() > 1 {
                    out.push(path);
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The strongly connected sets of more than one node (Tarjan's algorithm).
fn strongly_connected<V>(edges: &BTreeMap<String, BTreeMap<String, V>>) -> Vec<BTreeSet<String>> {
    struct State<'g, V> {
        edges: &'g BTreeMap<String, BTreeMap<String, V>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        next: usize,
        sets: Vec<BTreeSet<String>>,
    }
    fn visit<'g, V>(s: &mut State<'g, V>, v: &'g str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(out) = s.edges.get(v) {
            for w in out.keys() {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                set.insert(w.to_owned());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                s.sets.push(set);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        sets: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.sets
}

/// One cycle through the nodes of a strongly connected `set`: from its first node, a shortest
/// way back to it (breadth first, inside the set).
fn cycle_through<V>(
    set: &BTreeSet<String>,
    edges: &BTreeMap<String, BTreeMap<String, V>>,
) -> Vec<String> {
    let start = set.iter().next().expect("a set of two or more").clone();
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(v) = queue.pop_front() {
        for w in edges.get(&v).into_iter().flat_map(BTreeMap::keys) {
            if !set.contains(w) {
                continue;
            }
            if *w == start {
                let mut cycle = vec![v.clone()];
                let mut at = v.clone();
                while let Some(prev) = came_from.get(&at) {
                    cycle.push(prev.clone());
                    at = prev.clone();
                }
                cycle.reverse();
                return cycle;
            }
            if !came_from.contains_key(w) && *w != start {
                came_from.insert(w.clone(), v.clone());
                queue.push_back(w.clone());
            }
        }
    }
    unreachable!("a strongly connected set has a cycle through each of its nodes")
}

/// The crate root files of the package in `dir`: `src/lib.rs`, `src/main.rs`, `src/bin/*`,
/// and the `tests/`, `benches/`, `examples/` and `fuzz_targets/` targets.
pub fn crate_roots(dir: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for file in ["src/lib.rs", "src/main.rs"] {
        let f = dir.join(file);
        if f.exists() {
            roots.push(f);
        }
    }
    for sub in ["src/bin", "tests", "benches", "examples", "fuzz_targets"] {
        let Ok(entries) = fs::read_dir(dir.join(sub)) else { continue };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter_map(|p| {
                if p.extension().is_some_and(|e| e == "rs") {
                    Some(p)
                } else {
                    let main = p.join("main.rs");
                    main.exists().then_some(main)
                }
            })
            .collect();
        found.sort();
        roots.extend(found);
    }
    roots
}
