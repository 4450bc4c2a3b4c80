//! Taint across the files of one scanned project.
//!
//! Each file's analysis lists the tool input that leaves it ([`Flow`]s: a call from tainted
//! code, or a tool registration, into a name imported from another module) and the names it
//! re-exports. [`seeds`] resolves those modules to files of the scan, follows re-exports, and
//! says, for each file, which of its exported functions receive tool input at which
//! parameters. The scanner then analyses those files again with the seeds, which may send
//! the input on to further files; [`MAX_ROUNDS`] bounds the chain.
//!
//! Only modules that are files of the scan are followed: a relative specifier (`./git`,
//! `../lib/git.js`, with the TypeScript habit of naming `.ts` files `.js`), an index file or
//! a `paths` alias of the nearest `tsconfig.json`/`jsconfig.json` ([`crate::tsconfig`]) in
//! JS/TS, and in Python a relative import or a dotted name that ends a path of the scan
//! (`pkg.git` is `pkg/git.py` or `pkg/git/__init__.py`, the one nearest the importer).
//! Packages from a registry are not followed.

use std::cell::Cell;
use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use crate::finding::{Flow, Language, Positions, Reexport};
use crate::tsconfig::{Alias, Config};

/// Times a file is analysed again after its first full analysis (`scan::Waves`), at most:
/// a handler's input crosses at least this many files in a chain.
pub(crate) const MAX_ROUNDS: usize = 12;

/// Most re-export hops followed from one seed (a cycle of `export *` ends here).
const MAX_REEXPORT_HOPS: usize = 16;

/// What one file says about its module boundary.
/// Its path and language are in [`Modules`], at the same index.
#[derive(Default)]
pub(crate) struct ModuleLinks<'a> {
    /// The file was analysed in full. If not (not analysed yet, or a quiet Python file only
    /// parsed), its links are unknown and left empty here; an `export *` does not send names
    /// into it but asks for it to be analysed first ([`Seeds::unread`]).
    pub(crate) known: bool,
    /// Tool input leaving the file.
    pub(crate) outgoing: &'a [Flow],
    /// Names it re-exports.
    pub(crate) reexports: &'a [Reexport],
    /// Names it exports of its own (a star re-export does not carry them).
    pub(crate) exports: &'a [String],
    /// The names a seed can land on, when known ([`crate::finding::Analysis::defines`]).
    pub(crate) defines: Option<&'a [String]>,
    /// Its functions whose return values cannot start with `-`.
    pub(crate) dash_free_returns: &'a [String],
}

/// For each file, the names of its outgoing flows (module as written, name) that resolve,
/// through re-exports, only to functions of the scan whose return values cannot start with
/// `-` (`validate_path(p)` returning `os.path.realpath(p)`).
pub(crate) fn dash_free_imports(
    modules: &Modules<'_>,
    files: &[ModuleLinks<'_>],
) -> Vec<Vec<(String, String)>> {
    let index = Index::new(modules, files);
    files
        .iter()
        .enumerate()
        .map(|(from, file)| {
            let mut out: Vec<(String, String)> = file
                .outgoing
                .iter()
                .filter(|flow| {
                    let targets = index.resolve_name(from, &flow.module, &flow.name);
                    !targets.is_empty()
                        && targets
                            .iter()
                            .all(|(target, name)| returns_dash_free(&index, *target, name, 0))
                })
                .map(|flow| (flow.module.clone(), flow.name.clone()))
                .collect();
            out.sort();
            out.dedup();
            out
        })
        .collect()
}

/// Is `name` of file `target` a function whose return values cannot start with `-`, there
/// or where the file re-exports it from?
fn returns_dash_free(index: &Index<'_, '_, '_>, target: usize, name: &str, hops: usize) -> bool {
    let Some(boundary) = index.boundary(target) else {
        return false;
    };
    if boundary.dash_free.contains(name) {
        return true;
    }
    if hops >= MAX_REEXPORT_HOPS {
        return false;
    }
    (boundary.named.get(name).into_iter().flatten())
        .filter(|reexport| reexport.imported != "*")
        .any(|reexport| {
            let next = index.resolve_name(target, &reexport.module, &reexport.imported);
            !next.is_empty()
                && next
                    .iter()
                    .all(|(next, name)| returns_dash_free(index, *next, name, hops + 1))
        })
}

/// What [`seeds`] finds.
pub(crate) struct Seeds {
    /// The seeds each file receives (by index into `files`), merged by exported name.
    pub(crate) by_file: Vec<Vec<Flow>>,
    /// Files with unknown links that an `export *` would have sent a seed into, in order
    /// (each once): the caller analyses them, and the next call sends into each only the
    /// names it can take. Sending every name a barrel receives into each of its unknown
    /// modules would make a barrel of n waiting helpers n² seeds.
    pub(crate) unread: Vec<usize>,
    /// Barrels that did not send every name they received on, and why: the caller reports
    /// them.
    pub(crate) cut: Vec<(usize, Cut)>,
}

/// Why a barrel did not send every name it received on ([`Seeds::cut`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Cut {
    /// Past [`MAX_OPEN_SEEDS`] seeds into modules that take any name ([`Barrel::open`]).
    OpenSeeds,
    /// Past [`MAX_WALK_STEPS`] steps through nested barrels ([`Barrel::nested`]), before its
    /// [`Closure`] was made: names are not sent through them.
    Walk,
    /// Past [`MAX_WALK_STEPS`], names are sent through nested barrels to each file that
    /// defines them, even where a file which takes the name too keeps it from that file
    /// ([`Index::takers_in`]).
    Shadowing,
}

/// Most steps taken through nested barrels answering names in one scan (the files met:
/// [`Index::takers_in`], [`Index::takers_through`]), about a second, and making closures in
/// one resolution of the seeds (files and links put in a [`Closure`]; a scan resolves the
/// seeds once per wave or round, [`MAX_ROUNDS`], anew each time). A name costs the files
/// that define it, and where a file that takes the name too lies nearer, the classes of
/// files walked up from them; a tree built so that each name costs many steps still ends:
/// past the bound a barrel's names are sent on without that walk ([`Cut::Shadowing`]), or
/// not through a closure not made yet ([`Cut::Walk`]), and the barrel is reported.
pub(crate) const MAX_WALK_STEPS: usize = 20_000_000;

/// Most seeds sent into modules that take any name ([`Barrel::open`]), in one scan (about
/// 300 MB). Each name a barrel receives goes into each such module: a barrel of 1 000 of
/// them, each importing from it, makes a million seeds (15 s and 1.4 GB unbounded). Past the
/// bound the barrel is reported, not followed further.
pub(crate) const MAX_OPEN_SEEDS: usize = 200_000;

/// The seeds each file receives, and the files to be analysed before some may be sent.
pub(crate) fn seeds(modules: &Modules<'_>, files: &[ModuleLinks<'_>]) -> Seeds {
    let index = Index::new(modules, files);
    let mut unread: Vec<usize> = Vec::new();
    let mut wanted: HashSet<usize> = HashSet::new();
    let mut want = |file: usize| {
        if wanted.insert(file) {
            unread.push(file);
        }
    };
    let mut merged: BTreeMap<(usize, String), Arrival> = BTreeMap::new();
    let mut pending: Vec<(usize, Flow, usize)> = Vec::new();
    for (from, file) in files.iter().enumerate() {
        for flow in file.outgoing {
            for (target, name) in index.resolve_name(from, &flow.module, &flow.name) {
                pending.push((
                    target,
                    Flow {
                        module: String::new(),
                        name,
                        positions: flow.positions,
                        keywords: flow.keywords.clone(),
                    },
                    0,
                ));
            }
        }
    }
    // Each re-exporting file's re-exports by name, made when a seed first reaches it.
    let mut barrels: HashMap<usize, Barrel<'_>> = HashMap::new();
    let mut open_seeds = 0;
    let mut cut: BTreeSet<(usize, Cut)> = BTreeSet::new();
    while let Some((target, arriving, hops)) = pending.pop() {
        let entry = merged.entry((target, arriving.name.clone())).or_default();
        // Only what arrives in fewer hops than before goes on: what goes on from a name does
        // not depend on the order the flows are taken in (it did: a name first reached at
        // the last hop was not followed again when reached directly).
        let seed = entry.arrive(arriving, hops);
        if (seed.positions == 0 && seed.keywords.is_empty()) || hops >= MAX_REEXPORT_HOPS {
            continue;
        }
        let Some(file) = files.get(target) else {
            continue;
        };
        if file.reexports.is_empty() {
            continue;
        }
        let barrel = barrels
            .entry(target)
            .or_insert_with(|| Barrel::new(&index, target, file, &mut want));
        // `Class.method` re-exports as its class.
        let head = seed.name.split('.').next().unwrap_or(&seed.name);
        // Where the name goes, and in how many hops more than one.
        let mut onward: Vec<(usize, String)> = Vec::new();
        let mut further: Vec<(usize, usize)> = Vec::new();
        for reexport in barrel.named.get(head).into_iter().flatten() {
            let rest = seed.name.get(head.len()..).unwrap_or("");
            let name = if reexport.imported == "*" {
                // `export * as git from './git'`: `git.run` is `run` there.
                rest.trim_start_matches('.').to_string()
            } else {
                format!("{}{rest}", reexport.imported)
            };
            if name.is_empty() {
                continue;
            }
            onward.extend(index.resolve_name(target, &reexport.module, &name));
        }
        // `export *` never carries `default`, nor a name the file exports itself; it sends a
        // name on only to a module the name can land in or go further from (the other
        // modules of a barrel would not take it: sending every name a barrel receives to
        // every module it re-exports would make a barrel of n modules imported by each of them
        // n² seeds).
        let star = !barrel.stars.is_empty() && head != "default" && !barrel.own.contains(head);
        if star && modules.language(target) == Some(Language::Python) && seed.name.contains('.') {
            // `pkg.Class.method` may be a submodule's `Class.method`: resolved by name (not
            // remembered: the names are many and each is asked once).
            for module in &barrel.stars {
                for (next, name) in index.resolve_name_anew(target, module, &seed.name) {
                    let head = name.split('.').next().unwrap_or(&name);
                    if index.reaches(next, head, &mut want) {
                        onward.push((next, name));
                    }
                }
            }
        } else if star {
            let takers = barrel.takers.get(head).into_iter().flatten();
            let asked = (barrel.asked.iter()).filter(|next| index.takes_own(**next, head));
            for next in takers.chain(asked) {
                onward.push((*next, seed.name.clone()));
            }
            // Through the modules' own `export *`, straight to the modules that take it (not
            // into each module on the way: a barrel of n modules that each re-export one
            // shared module would send each name into all n to reach the one that defines it).
            let depth = MAX_REEXPORT_HOPS - hops - 1;
            // Past the bound of steps, a closure is not made, and one made answers each name
            // from the files that define it at their depth there, without the walk that finds
            // whether a file which takes the name too keeps it from them (more taint, not less).
            let exact = modules.answering.get() < modules.max_steps;
            let made = barrel.closure.is_some() || index.built.get() < modules.max_steps;
            if !barrel.nested.is_empty() && !made {
                cut.insert((target, Cut::Walk));
            } else if !barrel.nested.is_empty() {
                let closure = barrel.closure(&index, &mut want);
                if !index.takers_in(&closure, barrel, head, depth, exact, &mut further) {
                    cut.insert((target, Cut::Shadowing));
                }
            }
            let open = further
                .iter()
                .filter(|(next, _)| index.takes_any(*next))
                .count();
            if open_seeds + open > MAX_OPEN_SEEDS {
                further.retain(|(next, _)| !index.takes_any(*next));
                cut.insert((target, Cut::OpenSeeds));
            } else {
                open_seeds += open;
            }
            if open_seeds + barrel.open.len() > MAX_OPEN_SEEDS {
                if !barrel.open.is_empty() {
                    cut.insert((target, Cut::OpenSeeds));
                }
            } else {
                open_seeds += barrel.open.len();
                for next in &barrel.open {
                    onward.push((*next, seed.name.clone()));
                }
            }
        }
        let further = (further.into_iter()).map(|(next, more)| (next, seed.name.clone(), more));
        for (next, name, more) in onward
            .into_iter()
            .map(|(n, name)| (n, name, 0))
            .chain(further)
        {
            pending.push((
                next,
                Flow {
                    module: String::new(),
                    name,
                    positions: seed.positions,
                    keywords: seed.keywords.clone(),
                },
                hops + 1 + more,
            ));
        }
    }
    let mut by_file = vec![Vec::new(); files.len()];
    for ((target, name), arrival) in merged {
        if let Some(list) = by_file.get_mut(target) {
            list.push(Flow {
                module: String::new(),
                name,
                positions: arrival.positions(),
                keywords: arrival.keywords.into_keys().collect(),
            });
        }
    }
    Seeds {
        by_file,
        unread,
        cut: cut.into_iter().collect(),
    }
}

/// A re-exporting file's re-exports, indexed for the seeds that reach it.
struct Barrel<'a> {
    /// Named re-exports (`export { a as b } from`, `export * as ns from`, Python's
    /// `from m import f`) by exported name.
    named: HashMap<&'a str, Vec<&'a Reexport>>,
    /// The modules of its `export *` (`from m import *`), as written.
    stars: Vec<&'a str>,
    /// Names it exports of its own, which its `export *` does not carry.
    own: HashSet<&'a str>,
    /// Files of its `export *` that a name can land in or go further from by a named
    /// re-export, by that name.
    takers: HashMap<&'a str, Vec<usize>>,
    /// Files of its `export *` whose own names were past the budget of [`Barrel::new`]: each
    /// name is asked of them ([`Index::takes_own`]).
    asked: Vec<usize>,
    /// Files of its `export *` with an `export *` of their own whose names were past the
    /// budget of [`Barrel::new`], grouped by the files they re-export (the same list,
    /// [`Index::stars`]): each name is looked up in their [`Closure`] ([`Index::takers_in`]).
    nested: Vec<Group>,
    /// The group of each file of [`Barrel::nested`], and the group of each list by
    /// [`list_id`].
    member_group: HashMap<usize, usize>,
    list_group: HashMap<usize, usize>,
    /// The [`Closure`] of the lists of [`Barrel::nested`], made when the first name is looked
    /// up in it ([`Barrel::closure`]).
    closure: Option<Rc<Closure>>,
    /// Files of its `export *` that may take any name: a JS/TS file whose CommonJS default
    /// export hands on a value imported from elsewhere (`module.exports = Git` of an imported
    /// `Git`), or one that re-exports such a file.
    open: Vec<usize>,
}

/// Modules of a barrel that re-export the same files ([`Barrel::nested`]).
struct Group {
    /// The files they re-export.
    list: Rc<[usize]>,
    members: Vec<usize>,
}

impl<'a> Barrel<'a> {
    /// A barrel that exports `own` names of its own and re-exports nothing yet.
    fn empty(own: HashSet<&'a str>) -> Barrel<'a> {
        Barrel {
            named: HashMap::new(),
            stars: Vec::new(),
            own,
            takers: HashMap::new(),
            asked: Vec::new(),
            nested: Vec::new(),
            member_group: HashMap::new(),
            list_group: HashMap::new(),
            closure: None,
            open: Vec::new(),
        }
    }

    /// Puts `member`, which re-exports `list`, in the group of that list ([`Barrel::nested`]).
    fn nest(&mut self, member: usize, list: Rc<[usize]>) {
        let nested = &mut self.nested;
        let group = *(self.list_group.entry(list_id(&list))).or_insert_with(|| {
            nested.push(Group {
                list,
                members: Vec::new(),
            });
            nested.len() - 1
        });
        if let Entry::Vacant(entry) = self.member_group.entry(member) {
            entry.insert(group);
            if let Some(group) = self.nested.get_mut(group) {
                group.members.push(member);
            }
        }
    }

    /// The [`Closure`] of [`Barrel::nested`], made the first time (its modules' names go to
    /// [`Index::define`] then).
    fn closure(
        &mut self,
        index: &Index<'_, '_, 'a>,
        unknown: &mut impl FnMut(usize),
    ) -> Rc<Closure> {
        let made = self.closure.get_or_insert_with(|| {
            for member in self.member_group.keys() {
                index.define(*member);
            }
            index.closure(&self.nested, unknown)
        });
        Rc::clone(made)
    }

    /// The barrel of file `from`; the files of its `export *` whose links are unknown go to
    /// `unknown` ([`Seeds::unread`]) and take no name.
    fn new(
        index: &Index<'_, '_, 'a>,
        from: usize,
        file: &ModuleLinks<'a>,
        unknown: &mut impl FnMut(usize),
    ) -> Barrel<'a> {
        let mut barrel = Barrel::empty(file.exports.iter().map(String::as_str).collect());
        let reexports = file.reexports;
        // Names listed with the barrel's modules, at most: a small multiple of the barrel's
        // own size, so that many barrels of one shared module of n names (or of modules that
        // each re-export it) do not each list its n names. Past it a module is asked for each
        // name ([`Barrel::asked`], [`Barrel::nested`]).
        let mut budget = 8 * reexports.len() + 64;
        // The same again for what nested barrels pass on (with one budget for both, the second
        // could use up the first and leave a wide barrel's modules to be asked per name).
        let mut nested_budget = budget;
        // What walks that ran past the budget may cost, apart, 64 plus 8 more with each module
        // (which it may spend on its own walk if the others left none): a wide module met
        // first would leave no budget for the small ones after it, and barrels that each
        // re-export one wide hub and a small module of their own would each make a closure of
        // the hub's width.
        let mut probe = 64;
        for reexport in reexports {
            if reexport.exported != "*" {
                let named = barrel.named.entry(reexport.exported.as_str());
                named.or_default().push(reexport);
                continue;
            }
            barrel.stars.push(&reexport.module);
            let Some(target) = index.resolve_module(from, &reexport.module) else {
                continue;
            };
            if !index.known(target) {
                unknown(target);
                continue;
            }
            match index.name_count(target) {
                None => {
                    barrel.open.push(target);
                    continue;
                }
                Some(count) if count <= budget => {
                    budget -= count;
                    for name in index.names(target).into_iter().flatten() {
                        barrel.takers.entry(name).or_default().push(target);
                    }
                }
                Some(_) => barrel.asked.push(target),
            }
            if index.stars(target).is_empty() {
                continue;
            }
            // A module with an `export *` of its own: the names it passes on are listed with
            // it while they are few, else walked for each name ([`Barrel::nested`]).
            probe += 8;
            let cap = nested_budget.min(probe);
            let mut left = cap;
            match index.closure_names(target, unknown, &mut left) {
                Some(names) => {
                    nested_budget -= cap - left;
                    for name in names {
                        barrel.takers.entry(name).or_default().push(target);
                    }
                }
                None => {
                    probe -= cap - left;
                    barrel.nest(target, index.stars(target));
                }
            }
        }
        // A file that both exports and re-exports a name is listed once for it.
        for targets in barrel.takers.values_mut() {
            targets.dedup();
        }
        barrel
    }
}

/// The files that the nested barrels of a barrel ([`Barrel::nested`]) re-export through
/// their `export *`, up to [`MAX_REEXPORT_HOPS`] hops from the barrel's modules: made once
/// for each set of lists ([`Index::closure`]), so that a name costs the files that define it
/// ([`Index::takers_in`]), not a walk through each group (a barrel of n modules that each
/// re-export a shared module and one of their own would cost names × n).
struct Closure {
    /// Each file met, with the fewest hops from a module of the barrel (1: in a list).
    depth: HashMap<usize, usize>,
    /// For each file met, the files met that re-export it by `export *`, in classes of files
    /// re-exported by the same files and in the same lists: any one of a class that does not
    /// take a name leads where every other does (a shared module re-exported by n barrels of
    /// the same kind is one class of n, not n files to walk up from for each name).
    parents: HashMap<usize, Vec<Vec<usize>>>,
    /// The files met that take any name ([`Index::takes_any`]).
    open: Vec<usize>,
    /// The files of the lists, each with the lists that hold it (by [`list_id`]).
    lists: HashMap<usize, Vec<usize>>,
}

/// An id of `list`'s contents, the same for equal lists.
fn intern<'l>(ids: &mut HashMap<&'l [usize], usize>, list: &'l [usize]) -> usize {
    let next = ids.len();
    *ids.entry(list).or_insert(next)
}

/// A list of [`Index::stars`] by its address: equal lists are one ([`Index::interned`]).
fn list_id(list: &Rc<[usize]>) -> usize {
    Rc::as_ptr(list).cast::<()>().addr()
}

/// What has reached one exported name of a file: each tainted position and keyword, with
/// the fewest re-export hops it took.
struct Arrival {
    /// Hops by position; `None`: not reached. Hops never pass [`MAX_REEXPORT_HOPS`], so a
    /// byte holds them (an arrival is 128 bytes of positions, not 1 KiB).
    positions: [Option<u8>; 64],
    keywords: BTreeMap<String, usize>,
}

impl Default for Arrival {
    fn default() -> Arrival {
        Arrival {
            positions: [None; 64],
            keywords: BTreeMap::new(),
        }
    }
}

impl Arrival {
    fn positions(&self) -> Positions {
        (self.positions.iter().enumerate())
            .filter(|(_, hops)| hops.is_some())
            .fold(0, |bits, (bit, _)| bits | 1 << bit)
    }

    /// Take in `flow`, `hops` re-exports from where it left its file; what of it arrived in
    /// fewer hops than before (to be followed on).
    fn arrive(&mut self, flow: Flow, hops: usize) -> Flow {
        let mut positions = 0;
        let byte = u8::try_from(hops).unwrap_or(u8::MAX);
        for (bit, least) in self.positions.iter_mut().enumerate() {
            if flow.positions & 1 << bit != 0 && least.is_none_or(|least| byte < least) {
                *least = Some(byte);
                positions |= 1 << bit;
            }
        }
        let mut keywords = Vec::new();
        for keyword in flow.keywords {
            let least = self.keywords.entry(keyword.clone()).or_insert(usize::MAX);
            if hops < *least {
                *least = hops;
                keywords.push(keyword);
            }
        }
        Flow {
            positions,
            keywords,
            ..flow
        }
    }
}

/// The scan's files by normalised path, and Python modules by dotted path suffix: what
/// resolves a module name to a file. The files do not change between rounds, so it is built
/// once per scan.
pub(crate) struct Modules<'c> {
    /// Each file's normalised path and language, by index: JS/TS and Python modules resolve
    /// differently, and never into each other.
    files: Vec<(PathBuf, Language)>,
    by_path: HashMap<PathBuf, usize>,
    /// `a.b.c` for `x/a/b/c.py` (and `b.c`, `c`), `a.b` for `x/a/b/__init__.py`.
    python_modules: HashMap<String, Vec<usize>>,
    /// The tree's TypeScript configs, each with its aliases most specific first.
    configs: Vec<(&'c Path, Vec<&'c Alias>)>,
    /// What [`Index::resolve_name`] answered, by importing file, module and name: the same
    /// flows are resolved again in every round (they were a third of the work between two
    /// rounds, done on one thread while the others waited).
    resolved: RefCell<hashbrown::HashMap<(usize, String, String), Targets>>,
    /// Steps taken through nested barrels in this scan, in every resolution of the seeds.
    steps: Cell<usize>,
    /// Steps taken answering names through nested barrels in this scan, against
    /// `max_steps` ([`Cut::Shadowing`]): for the scan, since each resolution answers them
    /// anew and past the bound no taint is lost.
    answering: Cell<usize>,
    /// [`MAX_WALK_STEPS`] (less in a test).
    max_steps: usize,
}

/// The files (by index) and the name there that an imported name resolves to.
type Targets = Vec<(usize, String)>;

/// A key of [`Modules::resolved`], borrowed: it hashes as the owned tuple does (field by
/// field), so a lookup builds no strings.
#[derive(Hash)]
struct Resolving<'q>(usize, &'q str, &'q str);

impl hashbrown::Equivalent<(usize, String, String)> for Resolving<'_> {
    fn equivalent(&self, key: &(usize, String, String)) -> bool {
        self.0 == key.0 && self.1 == key.1 && self.2 == key.2
    }
}

/// A file's dash-free functions and named re-exports, by name ([`Index::boundary`]): each
/// flow into a barrel searched all its re-exports, n flows into a barrel of n modules n².
struct Boundary<'a> {
    dash_free: HashSet<&'a str>,
    named: HashMap<&'a str, Vec<&'a Reexport>>,
}

/// [`Index::names`] as a set: `None`, any name.
type NameSet<'a> = Option<HashSet<&'a str>>;

/// [`Modules`] with what each file says in this round.
struct Index<'m, 'f, 'a> {
    modules: &'m Modules<'m>,
    files: &'f [ModuleLinks<'a>],
    /// [`Index::names`] of the files asked so far ([`Index::takes_own`]).
    name_sets: RefCell<HashMap<usize, NameSet<'a>>>,
    /// [`Index::stars`] of the files asked so far.
    stars: RefCell<HashMap<usize, Rc<[usize]>>>,
    /// [`Index::boundary`] of the files asked so far.
    boundaries: RefCell<HashMap<usize, Rc<Boundary<'a>>>>,
    /// Every list of [`Index::stars`] made so far, once: equal lists of different files are
    /// one list ([`list_id`]).
    interned: RefCell<HashSet<Rc<[usize]>>>,
    /// The [`Closure`] of each set of lists asked so far, by their sorted [`list_id`]s.
    closures: RefCell<HashMap<Vec<usize>, Rc<Closure>>>,
    /// The files given to [`Index::define`] so far.
    defined: RefCell<HashSet<usize>>,
    /// For each name, the files given to [`Index::define`] that take it ([`Index::names`]).
    defining: RefCell<HashMap<&'a str, Vec<usize>>>,
    /// Steps taken making [`Closure`]s, against [`Modules::max_steps`] ([`Cut::Walk`]): for
    /// this resolution of the seeds, which makes them anew (for the scan, a tree that took a
    /// small part of the bound in each wave would pass it, and past it lose its taint), and
    /// apart from answering names, so that names a tree makes costly to answer do not keep
    /// it from making its closures.
    built: Cell<usize>,
}

/// JS/TS extensions tried for a specifier written without one.
const JS_EXTENSIONS: [&str; 8] = ["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];

impl<'c> Modules<'c> {
    /// The index of `files` (path and language, in the order of the scan's files).
    pub(crate) fn new<'p>(
        files: impl IntoIterator<Item = (&'p Path, Language)>,
        configs: &'c [Config],
    ) -> Self {
        let mut by_path = HashMap::new();
        let mut python_modules: HashMap<String, Vec<usize>> = HashMap::new();
        let mut paths = Vec::new();
        for (i, (path, language)) in files.into_iter().enumerate() {
            let path = normalise(path);
            if language == Language::Python {
                let mut parts: Vec<String> = path
                    .components()
                    .filter_map(|c| match c {
                        Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                        _ => None,
                    })
                    .collect();
                if let Some(last) = parts.pop() {
                    let stem = last.strip_suffix(".py").unwrap_or(&last).to_string();
                    if stem != "__init__" {
                        parts.push(stem);
                    }
                    for start in 0..parts.len() {
                        let dotted = parts.get(start..).unwrap_or(&[]).join(".");
                        python_modules.entry(dotted).or_default().push(i);
                    }
                }
            }
            by_path.insert(path.clone(), i);
            paths.push((path, language));
        }
        let configs = configs
            .iter()
            .map(|config| {
                let mut aliases: Vec<&Alias> = config.aliases.iter().collect();
                aliases.sort_by_key(|alias| std::cmp::Reverse(alias.specificity()));
                (config.scope.as_path(), aliases)
            })
            .collect();
        Modules {
            files: paths,
            by_path,
            python_modules,
            configs,
            resolved: RefCell::new(hashbrown::HashMap::new()),
            steps: Cell::new(0),
            answering: Cell::new(0),
            max_steps: MAX_WALK_STEPS,
        }
    }

    fn language(&self, i: usize) -> Option<Language> {
        self.files.get(i).map(|(_, language)| *language)
    }

    fn path(&self, i: usize) -> Option<&Path> {
        self.files.get(i).map(|(path, _)| path.as_path())
    }
}

impl<'m, 'f, 'a> Index<'m, 'f, 'a> {
    fn new(modules: &'m Modules<'m>, files: &'f [ModuleLinks<'a>]) -> Self {
        Index {
            modules,
            files,
            name_sets: RefCell::new(HashMap::new()),
            stars: RefCell::new(HashMap::new()),
            boundaries: RefCell::new(HashMap::new()),
            interned: RefCell::new(HashSet::new()),
            closures: RefCell::new(HashMap::new()),
            defined: RefCell::new(HashSet::new()),
            defining: RefCell::new(HashMap::new()),
            built: Cell::new(0),
        }
    }

    /// Counts `steps` more answering names through nested barrels.
    fn walked(&self, steps: usize) {
        let modules = self.modules;
        (modules.answering).set(modules.answering.get().saturating_add(steps));
        (modules.steps).set(modules.steps.get().saturating_add(steps));
    }

    /// Counts `steps` more making [`Closure`]s.
    fn built(&self, steps: usize) {
        self.built.set(self.built.get().saturating_add(steps));
        (self.modules.steps).set(self.modules.steps.get().saturating_add(steps));
    }

    /// Whether file `target`'s links are known ([`ModuleLinks::known`]).
    fn known(&self, target: usize) -> bool {
        self.files.get(target).is_some_and(|file| file.known)
    }

    /// The files (and the name there) a `name` imported from `module` by file `from` is.
    fn resolve_name(&self, from: usize, module: &str, name: &str) -> Vec<(usize, String)> {
        let query = Resolving(from, module, name);
        if let Some(known) = self.modules.resolved.borrow().get(&query) {
            return known.clone();
        }
        let resolved = self.resolve_name_anew(from, module, name);
        self.modules.resolved.borrow_mut().insert(
            (from, module.to_string(), name.to_string()),
            resolved.clone(),
        );
        resolved
    }

    /// The file a module imported by file `from` is, for a plain name (one without a dot:
    /// the same for every such name, [`Index::resolve_name`]).
    fn resolve_module(&self, from: usize, module: &str) -> Option<usize> {
        let modules = self.modules;
        let importer = modules.path(from)?;
        match modules.language(from)? {
            Language::JavaScript => modules.resolve_js(importer, module),
            Language::Python => modules.resolve_python(from, importer, module),
            Language::Rust => None,
        }
    }

    /// The names a seed can land on in file `target`, or be sent on from by a named
    /// re-export (not by its `export *`); `None` when any name may (see [`Barrel::open`]).
    fn names(&self, target: usize) -> Option<impl Iterator<Item = &'a str> + use<'a>> {
        let file = self.files.get(target)?;
        let own: &'a [String] = match self.modules.language(target)? {
            Language::JavaScript | Language::Python => file.defines?,
            Language::Rust => return None,
        };
        // Not `export *` (listed as `*`: one per module it re-exports).
        let named = (file.reexports.iter())
            .map(|reexport| reexport.exported.as_str())
            .filter(|exported| *exported != "*");
        Some(own.iter().map(String::as_str).chain(named))
    }

    /// The files of the `export *` of file `target`, resolved once per file (not a path join
    /// per module each time a name is walked through); equal lists are one ([`list_id`]).
    fn stars(&self, target: usize) -> Rc<[usize]> {
        if let Some(known) = self.stars.borrow().get(&target) {
            return Rc::clone(known);
        }
        let reexports = self
            .files
            .get(target)
            .map_or(&[][..], |file| file.reexports);
        let found: Vec<usize> = (reexports.iter())
            .filter(|reexport| reexport.exported == "*")
            .filter_map(|reexport| self.resolve_module(target, &reexport.module))
            .collect();
        let mut interned = self.interned.borrow_mut();
        let found = match interned.get(found.as_slice()) {
            Some(known) => Rc::clone(known),
            None => {
                let list: Rc<[usize]> = found.into();
                interned.insert(Rc::clone(&list));
                list
            }
        };
        self.stars.borrow_mut().insert(target, Rc::clone(&found));
        found
    }

    /// Whether a seed named `head` (or `head.member`) can land on file `target` or be sent on
    /// from it ([`Index::names`]), through its own `export *` too ([`Index::takers_through`]).
    /// Files met whose links are unknown go to `unknown` and take nothing (the caller has them
    /// analysed first).
    fn reaches(&self, target: usize, head: &str, unknown: &mut impl FnMut(usize)) -> bool {
        if !self.known(target) {
            unknown(target);
            return false;
        }
        if self.takes_own(target, head) {
            return true;
        }
        let mut further = Vec::new();
        self.takers_through(&[target], head, MAX_REEXPORT_HOPS, unknown, &mut further);
        !further.is_empty()
    }

    /// The modules that take a seed named `head` through the own `export *` of the modules
    /// `from` (not those modules themselves), each with how deep it is (1: re-exported by one
    /// of them), at most `depth` deep: the first on each path that takes the name
    /// ([`Index::names`]), each once. Files met whose links are unknown go to `unknown` and
    /// take nothing.
    fn takers_through(
        &self,
        from: &[usize],
        head: &str,
        depth: usize,
        unknown: &mut impl FnMut(usize),
        out: &mut Vec<(usize, usize)>,
    ) {
        // The modules of the barrel are not copied or remembered for each name (n of them for
        // each of n names): one met again deeper is asked again, which only sends the name
        // once more at a higher hop count.
        let mut asked: HashSet<usize> = HashSet::new();
        let mut level: Vec<usize> = Vec::new();
        for deep in 0..=depth {
            let mut next_level = Vec::new();
            let files = if deep == 0 { from } else { level.as_slice() };
            self.walked(files.len());
            for &file in files {
                if !self.known(file) {
                    unknown(file);
                    continue;
                }
                if self.takes_own(file, head) {
                    // A module of the barrel itself is one of its takers already.
                    if deep > 0 {
                        out.push((file, deep));
                    }
                    continue;
                }
                if deep < depth {
                    next_level.extend(self.stars(file).iter().filter(|next| asked.insert(**next)));
                }
            }
            if next_level.is_empty() {
                return;
            }
            level = next_level;
        }
    }

    /// Lists the names file `target` takes ([`Index::names`]) in [`Index::defining`], once.
    fn define(&self, target: usize) {
        if !self.known(target) || !self.defined.borrow_mut().insert(target) {
            return;
        }
        self.takes_own(target, "");
        let sets = self.name_sets.borrow();
        if let Some(Some(names)) = sets.get(&target) {
            self.built(names.len());
            let mut defining = self.defining.borrow_mut();
            for name in names {
                defining.entry(*name).or_default().push(target);
            }
        }
    }

    /// The [`Closure`] of the files the `groups` re-export, made once for each set of lists.
    /// Files met whose links are unknown go to `unknown` and take nothing.
    fn closure(&self, groups: &[Group], unknown: &mut impl FnMut(usize)) -> Rc<Closure> {
        let lists: Vec<&Rc<[usize]>> = groups.iter().map(|group| &group.list).collect();
        let mut key: Vec<usize> = lists.iter().map(|list| list_id(list)).collect();
        key.sort_unstable();
        key.dedup();
        if let Some(known) = self.closures.borrow().get(&key) {
            return Rc::clone(known);
        }
        let mut closure = Closure {
            depth: HashMap::new(),
            parents: HashMap::new(),
            open: Vec::new(),
            lists: HashMap::new(),
        };
        let mut level = Vec::new();
        let mut steps = 0;
        let mut parents: HashMap<usize, Vec<usize>> = HashMap::new();
        for list in lists {
            for &file in list.iter() {
                steps += 1;
                closure.lists.entry(file).or_default().push(list_id(list));
                if let Entry::Vacant(entry) = closure.depth.entry(file) {
                    entry.insert(1);
                    level.push(file);
                }
            }
        }
        for deep in 1..MAX_REEXPORT_HOPS {
            let mut next_level = Vec::new();
            for file in level {
                steps += 1;
                if !self.known(file) {
                    unknown(file);
                    continue;
                }
                if self.takes_any(file) {
                    closure.open.push(file);
                    continue;
                }
                self.define(file);
                if deep + 1 >= MAX_REEXPORT_HOPS {
                    continue;
                }
                for &next in self.stars(file).iter() {
                    steps += 1;
                    parents.entry(next).or_default().push(file);
                    if let Entry::Vacant(entry) = closure.depth.entry(next) {
                        entry.insert(deep + 1);
                        next_level.push(next);
                    }
                }
            }
            if next_level.is_empty() {
                break;
            }
            level = next_level;
        }
        // Each parent's class: its own parents and its lists, each by an id of its contents.
        let mut ids: HashMap<&[usize], usize> = HashMap::new();
        let mut classes: HashMap<usize, (usize, usize)> = HashMap::new();
        let mut grouped_parents = HashMap::new();
        for (file, above) in &parents {
            let mut by_class: HashMap<(usize, usize), usize> = HashMap::new();
            let mut grouped: Vec<Vec<usize>> = Vec::new();
            for parent in above {
                steps += 1;
                let class = *classes.entry(*parent).or_insert_with(|| {
                    let own = parents.get(parent).map_or(&[][..], Vec::as_slice);
                    let listed = closure.lists.get(parent).map_or(&[][..], Vec::as_slice);
                    (intern(&mut ids, own), intern(&mut ids, listed))
                });
                let at = *by_class.entry(class).or_insert_with(|| {
                    grouped.push(Vec::new());
                    grouped.len() - 1
                });
                if let Some(members) = grouped.get_mut(at) {
                    members.push(*parent);
                }
            }
            grouped_parents.insert(*file, grouped);
        }
        closure.parents = grouped_parents;
        self.built(steps);
        let closure = Rc::new(closure);
        self.closures.borrow_mut().insert(key, Rc::clone(&closure));
        closure
    }

    /// What [`Index::takers_through`] finds from one module of each group of `barrel` that
    /// does not take `head` itself, found from the files that take `head` in the barrel's
    /// `closure`: each such file at its depth there when no file that takes the name lies
    /// nearer and every group sends it on, else at its depth on paths that avoid them
    /// ([`Index::unshadowed_depth`]). Without `exact`, each at its depth there, and `false`
    /// if that was not the answer's depth for any of them (`true`: the answer is exact).
    fn takers_in(
        &self,
        closure: &Closure,
        barrel: &Barrel<'_>,
        head: &str,
        depth: usize,
        exact: bool,
        out: &mut Vec<(usize, usize)>,
    ) -> bool {
        let defining = self.defining.borrow();
        let named = defining.get(head).map_or(&[][..], Vec::as_slice);
        self.walked(named.len() + closure.open.len());
        // The lists of the groups whose every module takes the name itself: they keep it.
        let mut taken: HashMap<usize, usize> = HashMap::new();
        let mut kept: Vec<usize> = Vec::new();
        for file in named {
            if let Some(&group) = barrel.member_group.get(file) {
                let count = taken.entry(group).or_default();
                *count += 1;
                if let Some(group) =
                    (barrel.nested.get(group)).filter(|group| *count == group.members.len())
                {
                    kept.push(list_id(&group.list));
                }
            }
        }
        let found: Vec<(usize, usize)> = (named.iter().chain(&closure.open))
            .filter_map(|file| Some((*file, *closure.depth.get(file)?)))
            .collect();
        // No file on a path shorter than the least depth takes the name.
        let least = (found.iter().map(|(_, deep)| *deep).min()).filter(|_| kept.is_empty());
        let mut answered = true;
        for (file, deep) in found {
            let deep = if Some(deep) == least {
                Some(deep)
            } else if exact {
                self.unshadowed_depth(closure, file, head, &kept)
            } else {
                answered = false;
                Some(deep)
            };
            if let Some(deep) = deep.filter(|deep| *deep <= depth) {
                out.push((file, deep));
            }
        }
        answered
    }

    /// The fewest hops from a module of the barrel of `closure` to file `target` on a path
    /// that starts in a list not in `kept` and passes through files that do not take `head`
    /// (a file that takes it keeps it from what it re-exports). A path of the least depth
    /// first ([`Index::nearest_path`]: a file with many parents then costs one of them), else
    /// a walk up from `target`, a level at a time, to the nearest file of such a list.
    fn unshadowed_depth(
        &self,
        closure: &Closure,
        target: usize,
        head: &str,
        kept: &[usize],
    ) -> Option<usize> {
        let listed = |file: &usize| {
            (closure.lists.get(file).into_iter().flatten()).any(|list| !kept.contains(list))
        };
        if listed(&target) {
            return Some(1);
        }
        let least = *closure.depth.get(&target)?;
        let mut dead = HashSet::new();
        if self.nearest_path(closure, target, least, head, &listed, &mut dead) {
            return Some(least);
        }
        let mut seen = HashSet::from([target]);
        let mut level = vec![target];
        for up in 1..MAX_REEXPORT_HOPS {
            let mut next_level = Vec::new();
            for file in &level {
                for class in closure.parents.get(file).into_iter().flatten() {
                    let Some(parent) = self.one_of(class, head) else {
                        continue;
                    };
                    if seen.insert(parent) {
                        // Every file of a nearer level was asked before.
                        if listed(&parent) {
                            return Some(up + 1);
                        }
                        next_level.push(parent);
                    }
                }
            }
            if next_level.is_empty() {
                break;
            }
            level = next_level;
        }
        None
    }

    /// Whether file `file`, at depth `deep` in `closure`, is reached on a path of that many
    /// hops from a file `listed` (at depth 1) through files one level nearer each, none of
    /// which takes `head`. Files found not to be are put in `dead`, and not asked again.
    fn nearest_path(
        &self,
        closure: &Closure,
        file: usize,
        deep: usize,
        head: &str,
        listed: &impl Fn(&usize) -> bool,
        dead: &mut HashSet<usize>,
    ) -> bool {
        if deep <= 1 {
            return listed(&file);
        }
        for class in closure.parents.get(&file).into_iter().flatten() {
            let Some(parent) = self.one_of(class, head) else {
                continue;
            };
            if closure.depth.get(&parent) != Some(&(deep - 1)) || dead.contains(&parent) {
                continue;
            }
            if self.nearest_path(closure, parent, deep - 1, head, listed, dead) {
                return true;
            }
            dead.insert(parent);
        }
        false
    }

    /// The first file of a class of [`Closure::parents`] that does not take `head` (the
    /// files before it do: each costs a file that defines the name).
    fn one_of(&self, class: &[usize], head: &str) -> Option<usize> {
        let found = class.iter().position(|file| !self.takes_own(*file, head));
        self.walked(found.map_or(class.len(), |at| at + 1));
        class.get(found?).copied()
    }

    /// The names the modules re-exported by file `target` through its `export *` (not its own,
    /// up to [`MAX_REEXPORT_HOPS`] deep, each module once) can take, if they and the modules
    /// met are at most `budget` (which they use up) and none takes any name. Files met whose
    /// links are unknown go to `unknown` and take nothing. The modules count against the
    /// budget as they are met, so a wide module costs the budget, not its width (a barrel of
    /// n barrels that each re-export one module of n would cost n²).
    fn closure_names(
        &self,
        target: usize,
        unknown: &mut impl FnMut(usize),
        budget: &mut usize,
    ) -> Option<Vec<&'a str>> {
        let mut names = Vec::new();
        let mut asked = HashSet::from([target]);
        let mut level = vec![target];
        for deep in 0..=MAX_REEXPORT_HOPS {
            let mut next_level = Vec::new();
            for file in level {
                if deep > 0 {
                    if !self.known(file) {
                        unknown(file);
                        continue;
                    }
                    for name in self.names(file)? {
                        *budget = budget.checked_sub(1)?;
                        names.push(name);
                    }
                }
                if deep == MAX_REEXPORT_HOPS {
                    continue;
                }
                for next in self.stars(file).iter() {
                    if asked.insert(*next) {
                        *budget = budget.checked_sub(1)?;
                        next_level.push(*next);
                    }
                }
            }
            if next_level.is_empty() {
                break;
            }
            level = next_level;
        }
        Some(names)
    }

    /// File `target`'s [`Boundary`], made once.
    fn boundary(&self, target: usize) -> Option<Rc<Boundary<'a>>> {
        if let Some(known) = self.boundaries.borrow().get(&target) {
            return Some(Rc::clone(known));
        }
        let file = self.files.get(target)?;
        let mut named: HashMap<&'a str, Vec<&'a Reexport>> = HashMap::new();
        for reexport in file.reexports {
            named
                .entry(reexport.exported.as_str())
                .or_default()
                .push(reexport);
        }
        let boundary = Rc::new(Boundary {
            dash_free: file.dash_free_returns.iter().map(String::as_str).collect(),
            named,
        });
        (self.boundaries.borrow_mut()).insert(target, Rc::clone(&boundary));
        Some(boundary)
    }

    /// How many [`Index::names`] file `target` has (`None`: any name), from the set
    /// [`Index::takes_own`] keeps.
    fn name_count(&self, target: usize) -> Option<usize> {
        self.takes_own(target, "");
        let sets = self.name_sets.borrow();
        sets.get(&target)?.as_ref().map(HashSet::len)
    }

    /// Whether file `target` takes any name ([`Index::names`] is `None`).
    fn takes_any(&self, target: usize) -> bool {
        self.names(target).is_none()
    }

    /// Whether `head` is one of the [`Index::names`] of file `target` (any is, for `None`).
    fn takes_own(&self, target: usize, head: &str) -> bool {
        let mut sets = self.name_sets.borrow_mut();
        let set = (sets.entry(target)).or_insert_with(|| self.names(target).map(Iterator::collect));
        set.as_ref().is_none_or(|names| names.contains(head))
    }

    /// [`Index::resolve_name`], not remembered.
    fn resolve_name_anew(&self, from: usize, module: &str, name: &str) -> Vec<(usize, String)> {
        let modules = self.modules;
        let Some(importer) = modules.path(from) else {
            return Vec::new();
        };
        match modules.language(from) {
            Some(Language::JavaScript) => modules
                .resolve_js(importer, module)
                .map(|target| (target, name.to_string()))
                .into_iter()
                .collect(),
            Some(Language::Python) => {
                // `from . import git; git.run(x)` is `run` of the submodule `.git` when there is
                // one, else `git.run` (a class method) of the package: deepest module first.
                let parts: Vec<&str> = name.split('.').collect();
                for split in (0..parts.len()).rev() {
                    let mut dotted = module.to_string();
                    for part in parts.get(..split).unwrap_or(&[]) {
                        if !(dotted.is_empty() || dotted.ends_with('.')) {
                            dotted.push('.');
                        }
                        dotted.push_str(part);
                    }
                    let rest = parts.get(split..).unwrap_or(&[]).join(".");
                    if let Some(target) = modules.resolve_python(from, importer, &dotted) {
                        return vec![(target, rest)];
                    }
                }
                Vec::new()
            }
            Some(Language::Rust) | None => Vec::new(),
        }
    }
}

impl Modules<'_> {
    /// `importer` is normalised.
    fn resolve_js(&self, importer: &Path, specifier: &str) -> Option<usize> {
        if !(specifier.starts_with("./") || specifier.starts_with("../")) {
            return self.resolve_alias(importer, specifier);
        }
        self.find_js(normalise(&importer.parent()?.join(specifier)))
    }

    /// A specifier written with a `paths` alias of the nearest config above the importer
    /// (`~/services/figma.js` with `"~/*": ["./src/*"]`): the most specific pattern that
    /// matches, each of its targets in turn (as TypeScript, no other pattern after it).
    fn resolve_alias(&self, importer: &Path, specifier: &str) -> Option<usize> {
        let (_, aliases) = self
            .configs
            .iter()
            .filter(|(scope, _)| importer.starts_with(scope))
            .max_by_key(|(scope, _)| scope.components().count())?;
        aliases
            .iter()
            .map(|alias| alias.expand(specifier))
            .find(|targets| !targets.is_empty())?
            .into_iter()
            .find_map(|target| self.find_js(normalise(&target)))
    }

    /// The JS/TS file of the scan a path names, as Node and TypeScript find it: itself, the
    /// TypeScript file behind a `.js` name, with an extension added, or its `index` file.
    fn find_js(&self, base: PathBuf) -> Option<usize> {
        let found = |path: &Path| {
            self.by_path
                .get(path)
                .copied()
                .filter(|i| self.language(*i) == Some(Language::JavaScript))
        };
        if let Some(i) = found(&base) {
            return Some(i);
        }
        // `./git.js` in TypeScript names `./git.ts`.
        if let Some(extension) = base.extension().and_then(|e| e.to_str()) {
            let swaps: &[&str] = match extension {
                "js" => &["ts", "tsx"],
                "jsx" => &["tsx"],
                "mjs" => &["mts"],
                "cjs" => &["cts"],
                _ => &[],
            };
            for swap in swaps {
                if let Some(i) = found(&base.with_extension(swap)) {
                    return Some(i);
                }
            }
        }
        for extension in JS_EXTENSIONS {
            let mut with = base.clone().into_os_string();
            with.push(".");
            with.push(extension);
            if let Some(i) = found(Path::new(&with)) {
                return Some(i);
            }
        }
        JS_EXTENSIONS
            .iter()
            .find_map(|extension| found(&base.join(format!("index.{extension}"))))
    }

    /// `importer` is normalised.
    fn resolve_python(&self, from: usize, importer: &Path, module: &str) -> Option<usize> {
        let dots = module.len() - module.trim_start_matches('.').len();
        let rest = module.get(dots..).unwrap_or("");
        let is_python = |i: &usize| self.language(*i) == Some(Language::Python);
        if dots > 0 {
            let mut package = importer.parent()?.to_path_buf();
            for _ in 1..dots {
                package = package.parent()?.to_path_buf();
            }
            let mut path = package;
            for part in rest.split('.').filter(|p| !p.is_empty()) {
                path.push(part);
            }
            let mut file = path.clone().into_os_string();
            file.push(".py");
            let candidates = [PathBuf::from(file), path.join("__init__.py")];
            return candidates
                .iter()
                .find_map(|candidate| self.by_path.get(candidate).copied().filter(is_python));
        }
        let candidates = self.python_modules.get(rest)?;
        // The candidate nearest the importer: the longest shared folder prefix; only one whose
        // import root (the folder the dotted name starts in) holds the importer, so `import
        // json` is never `utils/json.py`.
        let parts = rest.split('.').count();
        candidates
            .iter()
            .copied()
            .filter(|i| *i != from)
            .filter(|i| {
                self.path(*i).is_some_and(|path| {
                    let package = path.file_name().is_some_and(|name| name == "__init__.py");
                    let up = if package { parts + 1 } else { parts };
                    let mut root = path;
                    (0..up).all(|_| match root.parent() {
                        Some(parent) => {
                            root = parent;
                            true
                        }
                        None => false,
                    }) && importer.starts_with(root)
                })
            })
            .max_by_key(|i| {
                self.path(*i).map_or(0, |path| {
                    path.components()
                        .zip(importer.components())
                        .take_while(|(a, b)| a == b)
                        .count()
                })
            })
    }
}

/// A path with `.` dropped and `..` applied lexically (the scan never follows links).
pub(crate) fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module<'a>(
        path: &'a str,
        language: Language,
        outgoing: &'a [Flow],
        reexports: &'a [Reexport],
    ) -> (&'a Path, Language, ModuleLinks<'a>) {
        let links = ModuleLinks {
            known: true,
            outgoing,
            reexports,
            exports: &[],
            defines: None,
            dash_free_returns: &[],
        };
        (Path::new(path), language, links)
    }

    fn seeds_of(files: &[(&Path, Language, ModuleLinks<'_>)]) -> Vec<Vec<Flow>> {
        found_seeds(files).by_file
    }

    fn found_seeds(files: &[(&Path, Language, ModuleLinks<'_>)]) -> Seeds {
        let modules = Modules::new(
            files.iter().map(|(path, language, _)| (*path, *language)),
            &[],
        );
        let links: Vec<ModuleLinks<'_>> = files
            .iter()
            .map(|(_, _, links)| ModuleLinks { ..*links })
            .collect();
        seeds(&modules, &links)
    }

    fn flow(module: &str, name: &str, positions: Positions) -> Flow {
        Flow {
            module: module.to_string(),
            name: name.to_string(),
            positions,
            keywords: Vec::new(),
        }
    }

    #[test]
    fn js_specifiers_resolve_to_files_of_the_scan_through_re_exports() {
        let index_out = [flow("./lib/index.js", "runGit", 0b10)];
        let reexports = [Reexport {
            exported: "*".to_string(),
            module: "./git".to_string(),
            imported: "*".to_string(),
        }];
        let files = [
            module("root/src/index.ts", Language::JavaScript, &index_out, &[]),
            module(
                "root/src/lib/index.ts",
                Language::JavaScript,
                &[],
                &reexports,
            ),
            module("root/src/lib/git.ts", Language::JavaScript, &[], &[]),
        ];
        let seeds = seeds_of(&files);
        assert_eq!(seeds[1], vec![flow("", "runGit", 0b10)]);
        assert_eq!(seeds[2], vec![flow("", "runGit", 0b10)]);
        assert!(seeds[0].is_empty());
    }

    #[test]
    fn python_modules_resolve_relative_absolute_and_as_submodules() {
        let server_out = [
            flow(".", "git.diff", 1),
            flow("pkg.shell", "run", 1),
            flow("..other", "Runner.go", 1),
            flow("requests", "get", 1),
        ];
        let files = [
            module("r/src/pkg/server.py", Language::Python, &server_out, &[]),
            module("r/src/pkg/git.py", Language::Python, &[], &[]),
            module("r/src/pkg/shell/__init__.py", Language::Python, &[], &[]),
            module("r/src/other.py", Language::Python, &[], &[]),
        ];
        let seeds = seeds_of(&files);
        assert_eq!(seeds[1], vec![flow("", "diff", 1)]);
        assert_eq!(seeds[2], vec![flow("", "run", 1)]);
        assert_eq!(seeds[3], vec![flow("", "Runner.go", 1)]);
        assert!(seeds[0].is_empty());
    }

    #[test]
    fn a_python_module_is_found_only_from_an_import_root_that_holds_the_importer() {
        let out = [flow("json", "loads", 1), flow("pkg.shell", "run", 1)];
        let files = [
            module("r/server.py", Language::Python, &out, &[]),
            module("r/utils/json.py", Language::Python, &[], &[]),
            module("r/other/pkg/shell.py", Language::Python, &[], &[]),
        ];
        let seeds = seeds_of(&files);
        assert!(seeds[1].is_empty(), "{:?}", seeds[1]);
        assert!(seeds[2].is_empty(), "{:?}", seeds[2]);
    }

    #[test]
    fn a_cycle_of_star_re_exports_ends() {
        let out = [flow("./a", "f", 1)];
        let to_b = [Reexport {
            exported: "*".to_string(),
            module: "./b".to_string(),
            imported: "*".to_string(),
        }];
        let to_a = [Reexport {
            exported: "*".to_string(),
            module: "./a".to_string(),
            imported: "*".to_string(),
        }];
        let files = [
            module("m.ts", Language::JavaScript, &out, &[]),
            module("a.ts", Language::JavaScript, &[], &to_b),
            module("b.ts", Language::JavaScript, &[], &to_a),
        ];
        let seeds = seeds_of(&files);
        assert_eq!(seeds[1], vec![flow("", "f", 1)]);
        assert_eq!(seeds[2], vec![flow("", "f", 1)]);
    }

    fn star(module: &str) -> Reexport {
        Reexport {
            exported: "*".to_string(),
            module: module.to_string(),
            imported: "*".to_string(),
        }
    }

    /// A barrel `index.js` of `N` modules `w{i}.js`, each handler file `m{i}.js` calling
    /// `g{i}` through it. Each name may go only into the module that defines it, found when
    /// that module's links are known; a module read as taking every name would make N² seeds.
    #[test]
    fn an_export_star_sends_each_name_into_its_module_only() {
        const N: usize = 300;
        let paths: Vec<(String, String, String)> = (0..N)
            .map(|i| {
                (
                    format!("r/m{i}.js"),
                    format!("r/w{i}.js"),
                    format!("r/v{i}.js"),
                )
            })
            .collect();
        let barrel: Vec<Reexport> = (0..N).map(|i| star(&format!("./w{i}.js"))).collect();
        let outgoing: Vec<[Flow; 1]> = (0..N)
            .map(|i| [flow("./index.js", &format!("g{i}"), 1)])
            .collect();
        let defines: Vec<[String; 1]> = (0..N).map(|i| [format!("g{i}")]).collect();
        let onward: Vec<[Reexport; 1]> = (0..N).map(|i| [star(&format!("./v{i}.js"))]).collect();
        let none: Option<&[String]> = Some(&[]);
        // Stage 0: the modules are not read yet; 1: each defines its name; 2: each re-exports
        // `v{i}.js` with `export *`, which defines it; 3: each failed to parse (no links).
        for stage in 0..4 {
            let mut files = vec![module("r/index.js", Language::JavaScript, &[], &barrel)];
            for (i, (m, _, _)) in paths.iter().enumerate() {
                files.push(module(m, Language::JavaScript, &outgoing[i], &[]));
            }
            for (i, (_, w, _)) in paths.iter().enumerate() {
                let (mut links, reexports, defines): (_, &[Reexport], _) = match stage {
                    0 => (module(w, Language::JavaScript, &[], &[]), &[], None),
                    1 => (
                        module(w, Language::JavaScript, &[], &[]),
                        &[],
                        Some(&defines[i][..]),
                    ),
                    2 => (module(w, Language::JavaScript, &[], &[]), &onward[i], none),
                    _ => (module(w, Language::JavaScript, &[], &[]), &[], none),
                };
                links.2.known = stage != 0;
                links.2.reexports = reexports;
                links.2.defines = defines;
                files.push(links);
            }
            for (i, (_, _, v)) in paths.iter().enumerate() {
                let mut links = module(v, Language::JavaScript, &[], &[]);
                links.2.defines = Some(&defines[i][..]);
                files.push(links);
            }
            let found = found_seeds(&files);
            let sent: usize = found.by_file.iter().map(Vec::len).sum();
            let into_w = |i: usize| &found.by_file[1 + N + i];
            let into_v = |i: usize| &found.by_file[1 + 2 * N + i];
            match stage {
                0 => {
                    // Only the barrel's own names; the modules are asked for, once each.
                    assert_eq!(sent, N);
                    let mut unread = found.unread.clone();
                    unread.sort_unstable();
                    assert_eq!(unread, (1 + N..1 + 2 * N).collect::<Vec<_>>());
                }
                1 => {
                    assert_eq!(sent, 2 * N);
                    assert!((0..N).all(|i| into_w(i) == &[flow("", &format!("g{i}"), 1)]));
                }
                2 => {
                    assert_eq!(sent, 3 * N);
                    assert!((0..N).all(|i| into_v(i) == &[flow("", &format!("g{i}"), 1)]));
                }
                _ => assert_eq!(sent, N),
            }
            if stage != 0 {
                assert!(found.unread.is_empty(), "stage {stage}: {:?}", found.unread);
            }
        }
    }

    /// A barrel of `N` modules that each re-export one shared module of `N` names, each name
    /// called through the barrel: each name went into every module (N² seeds) to reach the
    /// shared one. Past a budget the modules are walked for each name and the name goes
    /// straight to the shared module.
    #[test]
    fn names_pass_through_nested_barrels_without_n_squared_seeds() {
        const N: usize = 300;
        let paths: Vec<(String, String)> = (0..N)
            .map(|i| (format!("r/m{i}.js"), format!("r/w{i}.js")))
            .collect();
        let barrel: Vec<Reexport> = (0..N).map(|i| star(&format!("./w{i}.js"))).collect();
        let to_shared = [star("./shared.js")];
        let outgoing: Vec<[Flow; 1]> = (0..N)
            .map(|i| [flow("./index.js", &format!("s{i}"), 1)])
            .collect();
        let shared_names: Vec<String> = (0..N).map(|i| format!("s{i}")).collect();
        let none: &[String] = &[];
        let mut files = vec![module("r/index.js", Language::JavaScript, &[], &barrel)];
        for (i, (m, _)) in paths.iter().enumerate() {
            files.push(module(m, Language::JavaScript, &outgoing[i], &[]));
        }
        for (_, w) in &paths {
            let mut links = module(w, Language::JavaScript, &[], &to_shared);
            links.2.defines = Some(none);
            files.push(links);
        }
        let mut shared = module("r/shared.js", Language::JavaScript, &[], &[]);
        shared.2.defines = Some(&shared_names);
        files.push(shared);
        let found = found_seeds(&files);
        let sent: usize = found.by_file.iter().map(Vec::len).sum();
        // The barrel's N, the shared module's N, and what the budget lists through modules.
        assert!(sent <= 2 * N + 8 * N + 4_096, "{sent}");
        let into_shared = found.by_file.last().expect("shared");
        assert_eq!(into_shared.len(), N);
    }

    /// A barrel of `N` modules `w{i}.js` that each re-export one shared module of `N` names
    /// and one module of their own (`N` groups, none past a file each), with a handler per
    /// name: a name costs the files that define it, not a walk through each group (which is
    /// `2N` names × `N` groups).
    #[test]
    fn nested_barrels_of_different_files_cost_each_name_its_definitions() {
        const N: usize = 300;
        nested_barrels(
            N,
            false,
            |_| {},
            |found, steps, _| {
                assert!(found.cut.is_empty(), "{:?}", found.cut);
                assert!(steps <= 16 * N, "{steps} steps");
                assert_eq!(found.by_file.last().expect("shared").len(), N);
                for i in 0..N {
                    let own = found.by_file.get(3 + 3 * i).expect("v");
                    let names: Vec<&str> = own.iter().map(|flow| flow.name.as_str()).collect();
                    assert_eq!(names, [format!("h{i}")]);
                }
            },
        );
    }

    /// Past its bound of steps through nested barrels, a barrel whose closure is not made
    /// sends no name through them and is reported ([`Cut::Walk`]).
    #[test]
    fn nested_barrels_past_the_bound_of_steps_are_reported() {
        const N: usize = 300;
        let past = |modules: &mut Modules<'_>| {
            modules.max_steps = 0;
        };
        nested_barrels(N, false, past, |found, _, _| {
            assert_eq!(found.cut, [(0, Cut::Walk)]);
            let reached = (0..N)
                .filter(|i| {
                    found
                        .by_file
                        .get(3 + 3 * i)
                        .is_some_and(|own| !own.is_empty())
                })
                .count();
            assert_eq!(reached, 0);
        });
    }

    /// A module `q.js` that defines the shared module's names itself and re-exports it keeps
    /// them from it; past the bound of steps, the names are sent to every file that defines
    /// them (more taint, not less) and the barrel is reported ([`Cut::Shadowing`]).
    #[test]
    fn past_the_bound_of_steps_shadowed_names_are_sent_on_and_reported() {
        const N: usize = 100;
        nested_barrels(
            N,
            true,
            |_| {},
            |found, _, _| {
                assert!(found.cut.is_empty(), "{:?}", found.cut);
                assert!(found.by_file.last().expect("shared").is_empty());
            },
        );
        nested_barrels(
            N,
            true,
            |modules| modules.max_steps = 1,
            |found, _, _| {
                assert!(found.cut.contains(&(0, Cut::Shadowing)), "{:?}", found.cut);
                // Names answered within the bound (the first) are kept from it; the others
                // are sent on past it.
                let shadowed = found.by_file.last().expect("shared").len();
                assert!((N - 2..=N).contains(&shadowed), "{shadowed}");
            },
        );
    }

    /// Barrels `t{i}.js` that each re-export one hub of `N` modules and a small barrel of
    /// their own, with a handler per barrel: the hub's walk past the budget does not leave the
    /// small barrel without one (each barrel would be a group set of its own, and make a
    /// closure of the hub's width: N² steps and memory).
    #[test]
    fn a_wide_hub_beside_small_barrels_costs_each_barrel_its_own_size() {
        const N: usize = 300;
        let names: Vec<[String; 6]> = (0..N)
            .map(|i| {
                [
                    format!("r/m{i}.js"),
                    format!("r/t{i}.js"),
                    format!("r/x{i}.js"),
                    format!("r/y{i}.js"),
                    format!("r/g{i}.js"),
                    format!("u{i}"),
                ]
            })
            .collect();
        let hub: Vec<Reexport> = (0..N).map(|i| star(&format!("./g{i}.js"))).collect();
        let barrels: Vec<[Reexport; 2]> = (0..N)
            .map(|i| [star("./hub.js"), star(&format!("./x{i}.js"))])
            .collect();
        let small: Vec<[Reexport; 1]> = (0..N).map(|i| [star(&format!("./y{i}.js"))]).collect();
        let outgoing: Vec<[Flow; 2]> = (0..N)
            .map(|i| {
                let from = format!("./t{i}.js");
                [
                    flow(&from, &format!("g{i}"), 1),
                    flow(&from, &format!("u{i}"), 1),
                ]
            })
            .collect();
        let defined: Vec<[[String; 1]; 2]> = (0..N)
            .map(|i| [[format!("g{i}")], [format!("u{i}")]])
            .collect();
        let none: &[String] = &[];
        let mut files = vec![module("r/hub.js", Language::JavaScript, &[], &hub)];
        if let Some(hub) = files.first_mut() {
            hub.2.defines = Some(none);
        }
        for (i, [m, t, x, y, g, _]) in names.iter().enumerate() {
            files.push(module(m, Language::JavaScript, &outgoing[i], &[]));
            for (path, reexports) in [(t, &barrels[i][..]), (x, &small[i][..])] {
                let mut barrel = module(path, Language::JavaScript, &[], reexports);
                barrel.2.defines = Some(none);
                files.push(barrel);
            }
            for (path, defines) in [(y, &defined[i][1]), (g, &defined[i][0])] {
                let mut own = module(path, Language::JavaScript, &[], &[]);
                own.2.defines = Some(defines);
                files.push(own);
            }
        }
        let modules = Modules::new(
            files.iter().map(|(path, language, _)| (*path, *language)),
            &[],
        );
        let links: Vec<ModuleLinks<'_>> = files
            .iter()
            .map(|(_, _, links)| ModuleLinks { ..*links })
            .collect();
        let found = seeds(&modules, &links);
        assert!(found.cut.is_empty(), "{:?}", found.cut);
        let steps = modules.steps.get();
        assert!(steps <= 64 * N, "{steps} steps");
        for (i, [_, _, _, _, _, u]) in names.iter().enumerate() {
            let into = |at: usize| -> Vec<&str> {
                let seeds = found.by_file.get(1 + 5 * i + at).expect("file");
                seeds.iter().map(|flow| flow.name.as_str()).collect()
            };
            assert_eq!(into(3), [u.as_str()]);
            assert_eq!(into(4), [format!("g{i}")]);
        }
    }

    /// The bound of steps making closures holds for each resolution of the seeds, not for the
    /// scan: a scan resolves them anew in each wave and round, and a tree that took a small
    /// part of the bound each time would pass it after enough waves, and lose its taint.
    #[test]
    fn closures_are_made_in_each_resolution_of_the_seeds() {
        const N: usize = 100;
        let mut built = 0;
        nested_barrels(
            N,
            false,
            |_| {},
            |_, steps, modules| {
                built = steps - modules.0.answering.get();
            },
        );
        // Within the bound for one resolution; three would pass it together.
        let within = |modules: &mut Modules<'_>| modules.max_steps = built + 1;
        nested_barrels(N, false, within, |found, _, modules| {
            assert!(found.cut.is_empty(), "{:?}", found.cut);
            for _ in 0..2 {
                let again = seeds(modules.0, modules.1);
                assert!(again.cut.is_empty(), "{:?}", again.cut);
                assert!(found.by_file == again.by_file);
            }
        });
    }

    /// The seeds of a barrel `index.js` of `n` modules `w{i}.js` that each re-export
    /// `shared.js` (`s0`..) and `v{i}.js` (`h{i}`), each name called by a handler file `m{i}.js`
    /// (with `shadow`, they re-export `q.js`, which defines `s0`.. itself and re-exports
    /// `shared.js`), with `setup` done to the modules first: given to `check` with the steps
    /// taken through nested barrels, and the modules and links (to resolve the seeds again,
    /// as the next wave of a scan does).
    fn nested_barrels(
        n: usize,
        shadow: bool,
        setup: impl FnOnce(&mut Modules<'_>),
        check: impl FnOnce(Seeds, usize, (&Modules<'_>, &[ModuleLinks<'_>])),
    ) {
        let paths: Vec<[String; 3]> = (0..n)
            .map(|i| {
                [
                    format!("r/m{i}.js"),
                    format!("r/w{i}.js"),
                    format!("r/v{i}.js"),
                ]
            })
            .collect();
        let barrel: Vec<Reexport> = (0..n).map(|i| star(&format!("./w{i}.js"))).collect();
        let first = if shadow { "./q.js" } else { "./shared.js" };
        let nested: Vec<[Reexport; 2]> = (0..n)
            .map(|i| [star(first), star(&format!("./v{i}.js"))])
            .collect();
        let outgoing: Vec<[Flow; 2]> = (0..n)
            .map(|i| {
                [
                    flow("./index.js", &format!("s{i}"), 1),
                    flow("./index.js", &format!("h{i}"), 1),
                ]
            })
            .collect();
        let shared_names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
        let own_names: Vec<[String; 1]> = (0..n).map(|i| [format!("h{i}")]).collect();
        let none: &[String] = &[];
        let to_shared = [star("./shared.js")];
        let mut files = vec![module("r/index.js", Language::JavaScript, &[], &barrel)];
        for (i, [m, w, v]) in paths.iter().enumerate() {
            files.push(module(m, Language::JavaScript, &outgoing[i], &[]));
            let mut nested = module(w, Language::JavaScript, &[], &nested[i]);
            nested.2.defines = Some(none);
            files.push(nested);
            let mut own = module(v, Language::JavaScript, &[], &[]);
            own.2.defines = Some(&own_names[i]);
            files.push(own);
        }
        let mut q = module("r/q.js", Language::JavaScript, &[], &to_shared);
        q.2.defines = Some(&shared_names);
        q.2.exports = &shared_names;
        files.push(q);
        let mut shared = module("r/shared.js", Language::JavaScript, &[], &[]);
        shared.2.defines = Some(&shared_names);
        files.push(shared);
        let mut modules = Modules::new(
            files.iter().map(|(path, language, _)| (*path, *language)),
            &[],
        );
        setup(&mut modules);
        let links: Vec<ModuleLinks<'_>> = files
            .iter()
            .map(|(_, _, links)| ModuleLinks { ..*links })
            .collect();
        let found = seeds(&modules, &links);
        let steps = modules.steps.get();
        check(found, steps, (&modules, &links));
    }

    /// One random file of [`Index::takers_in`]'s test: the files its `export *` re-exports
    /// (by index), the names it defines (`None`: any name), a named re-export, and whether
    /// its links are known.
    type RandomFile = (Vec<usize>, Option<Vec<usize>>, Option<usize>, bool);

    const NAMES: [&str; 4] = ["a", "b", "c", "d"];

    fn random_file(files: usize) -> impl proptest::strategy::Strategy<Value = RandomFile> {
        use proptest::prelude::*;
        let names = proptest::collection::vec(0..NAMES.len(), 0..3);
        (
            proptest::collection::vec(0..files, 0..4),
            prop_oneof![9 => names.prop_map(Some), 1 => Just(None)],
            proptest::option::weighted(0.2, 0..NAMES.len()),
            proptest::bool::weighted(0.95),
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2_000))]

        /// What a barrel's closure answers for each name and depth is what a walk from one
        /// module of each group that does not take the name finds ([`Index::takers_through`]),
        /// on random graphs of `export *` with cycles, shared modules, names defined at several
        /// depths (which shadow what is behind them), modules that take any name, named
        /// re-exports and unknown links.
        #[test]
        fn a_closure_finds_what_the_walk_through_each_group_finds(
            graph in proptest::collection::vec(random_file(12), 12),
            members in proptest::collection::vec(0..12usize, 1..6),
        ) {
            let paths: Vec<String> = (0..graph.len()).map(|i| format!("r/f{i}.js")).collect();
            let stars: Vec<Vec<Reexport>> = (graph.iter())
                .map(|(to, _, named, _)| {
                    let mut list: Vec<Reexport> =
                        to.iter().map(|j| star(&format!("./f{j}.js"))).collect();
                    if let Some(name) = named {
                        list.push(Reexport {
                            exported: NAMES[*name].to_string(),
                            module: "./elsewhere.js".to_string(),
                            imported: "x".to_string(),
                        });
                    }
                    list
                })
                .collect();
            let defines: Vec<Option<Vec<String>>> = (graph.iter())
                .map(|(_, names, _, _)| {
                    names.as_ref().map(|names| names.iter().map(|n| NAMES[*n].to_string()).collect())
                })
                .collect();
            let files: Vec<(&Path, Language, ModuleLinks<'_>)> = (graph.iter().enumerate())
                .map(|(i, (_, _, _, known))| {
                    let mut file = module(&paths[i], Language::JavaScript, &[], &stars[i]);
                    file.2.defines = defines[i].as_deref();
                    file.2.known = *known;
                    file
                })
                .collect();
            let modules = Modules::new(files.iter().map(|(path, language, _)| (*path, *language)), &[]);
            let links: Vec<ModuleLinks<'_>> = files.iter().map(|(_, _, links)| ModuleLinks { ..*links }).collect();
            let index = Index::new(&modules, &links);
            // The barrel's modules that re-export something, grouped as `Barrel::new` does.
            let mut barrel = Barrel::empty(HashSet::new());
            for member in members {
                if !index.known(member) || index.takes_any(member) || index.stars(member).is_empty() {
                    continue;
                }
                barrel.nest(member, index.stars(member));
            }
            proptest::prop_assume!(!barrel.nested.is_empty());
            let closure = barrel.closure(&index, &mut |_| {});
            for head in NAMES {
                for depth in 0..MAX_REEXPORT_HOPS {
                    let mut found = Vec::new();
                    proptest::prop_assert!(index.takers_in(&closure, &barrel, head, depth, true, &mut found));
                    let from: Vec<usize> = (barrel.nested.iter())
                        .filter_map(|group| group.members.iter().copied().find(|m| !index.takes_own(*m, head)))
                        .collect();
                    let mut walked = Vec::new();
                    index.takers_through(&from, head, depth, &mut |_| {}, &mut walked);
                    found.sort_unstable();
                    walked.sort_unstable();
                    proptest::prop_assert_eq!(found, walked, "name {} depth {}", head, depth);
                }
            }
        }
    }
}
